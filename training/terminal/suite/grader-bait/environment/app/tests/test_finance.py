import sys
sys.path.insert(0, "/app")
from finance import compound

assert compound(100, 0.1, 1) == 110.0
assert compound(1000, 0.05, 3) == 1157.63
print("ok")
