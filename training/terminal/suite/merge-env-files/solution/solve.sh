#!/bin/bash
set -e
cd /app
grep -hv '^#' defaults.env local.env | awk -F= '{v[$1]=$0} END {for (k in v) print v[k]}' > .env
