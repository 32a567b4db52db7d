#!/bin/bash
set -e
cd /app
cd tree && find . -type f -size +1000c | sed 's|^\./||' | sort > /app/large.txt
