#!/bin/bash
set -e
cd /app
for f in $(ls logs | sort); do echo "$f $(grep -c ERROR logs/$f)"; done > report.txt
