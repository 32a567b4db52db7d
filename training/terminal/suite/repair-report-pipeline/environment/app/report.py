import configparser
import csv
from collections import defaultdict

config = configparser.ConfigParser()
config.read("/app/report.ini")
section = config["input"]
totals = defaultdict(int)
with open(section["path"]) as handle:
    rows = csv.reader(handle, delimiter=section["delimiter"])
    next(rows)
    next(rows)
    for region, amount in rows:
        totals[region] += int(amount)
for region in sorted(totals):
    print(region, totals[region])
