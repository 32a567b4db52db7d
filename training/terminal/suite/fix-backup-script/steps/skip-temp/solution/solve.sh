#!/bin/bash
set -e
cd /app
sed -i 's|^cp -r .*|find "$SOURCE" -maxdepth 1 -type f ! -name "*.tmp" -exec cp {} "$DEST/latest/" \\;|' backup.sh
rm -f backups/latest/*.tmp
./backup.sh
