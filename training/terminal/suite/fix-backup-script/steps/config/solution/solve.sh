#!/bin/bash
set -e
cd /app
sed -i 's|^SOURCE=.*|SOURCE=/app/data|' backup.conf
./backup.sh
