#!/bin/bash
set -e
cd /app
mkdir -p clean
python3 - <<'EOF'
import csv, json
from datetime import datetime

def date(text):
    for fmt in ("%Y-%m-%d", "%d/%m/%Y", "%Y/%m/%d"):
        try:
            return datetime.strptime(text, fmt).strftime("%Y-%m-%d")
        except ValueError:
            pass
    return None

rows = list(csv.reader(open("customers.csv")))
header, body = rows[0], rows[1:]
clean, rejects, seen, duplicates = [], [], set(), 0
for row in body:
    email, day = row[1].lower(), date(row[2])
    if "@" not in email or day is None:
        rejects.append(row)
    elif email in seen:
        duplicates += 1
    else:
        seen.add(email)
        clean.append([row[0], email, day])
csv.writer(open("clean/customers.csv", "w", newline="")).writerows([header] + clean)
csv.writer(open("clean/rejects.csv", "w", newline="")).writerows([header] + rejects)
json.dump({"input": len(body), "clean": len(clean), "duplicates": duplicates, "rejects": len(rejects)}, open("clean/stats.json", "w"))
EOF
