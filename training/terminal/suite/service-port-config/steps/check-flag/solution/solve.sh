#!/bin/bash
set -e
cd /app
echo 'Run `python3 service.py --check` to validate service.conf.' >> README.md
