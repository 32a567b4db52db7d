import argparse

parser = argparse.ArgumentParser(description="Uppercase a text file.")
parser.add_argument("source")
parser.add_argument("--out", required=True, help="where to write the result")
args = parser.parse_args()
with open(args.source) as src, open(args.out, "w") as dst:
    dst.write(src.read().upper())
