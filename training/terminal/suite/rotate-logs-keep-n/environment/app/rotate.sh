#!/bin/bash
source /app/rotate.conf
cd /app/logs
ls app-*.log | sort -r | head -n "$KEEP" | xargs -r rm --
