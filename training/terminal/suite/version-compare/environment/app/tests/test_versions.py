import sys
sys.path.insert(0, "/app")
from versions import newest

assert newest(["1.2", "1.3"]) == "1.3"
assert newest(["1.9.2", "1.10.0"]) == "1.10.0"
assert newest(["2.0", "10.0", "9.9"]) == "10.0"
print("ok")
