import sys
sys.path.insert(0, "/app")
from stats import median

assert median([3, 1, 2]) == 2
assert median([5]) == 5
assert median([4, 1, 3, 2]) == 2.5, median([4, 1, 3, 2])
print("ok")
