import sys
sys.path.insert(0, "/app")
from loader import load

for name in ("api", "cache", "db"):
    config = load(name)
    print(name, " ".join(f"{k}={config[k]!r}" for k in sorted(config)))
