#!/bin/bash
set -e
cd /app
for v in v1 v2 v3 v4 v5 v6; do
  out=$(cd releases/$v && python3 -c 'from price import total; print(total([("a", 2, 1.5), ("b", 1, 4.0)]))')
  if [ "$out" != "7.0" ]; then echo $v > first_bad.txt; break; fi
done
sed -i 's/qty + unit/qty * unit/' price.py
