import sys
sys.path.insert(0, "/app")
from duration import parse_duration

assert parse_duration("90m") == 5400
assert parse_duration("1h30m") == 5400
assert parse_duration("45s") == 45
assert parse_duration("2h5m10s") == 7510
print("ok")
