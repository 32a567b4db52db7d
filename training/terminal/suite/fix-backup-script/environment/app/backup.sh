#!/bin/bash
# Copies every file of $SOURCE into $DEST/latest (settings in backup.conf beside this script).
set -e
source "$(dirname "$0")/backup.conf"
mkdir -p "$DEST/latest"
cp -r "$SOURCE"/* "$DEST/latest/"
echo "backed up $(ls "$DEST/latest" | wc -l) files"
