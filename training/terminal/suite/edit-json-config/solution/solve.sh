#!/bin/bash
set -e
cd /app
python3 -c "
import json; c = json.load(open('config.json')); c.update(port=8080, debug=False)
json.dump(c, open('config.json', 'w'), indent=2)"
