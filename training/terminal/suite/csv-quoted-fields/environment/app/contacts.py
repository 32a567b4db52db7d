import sys


def emails(path):
    lines = open(path).read().splitlines()
    header = lines[0].split(",")
    column = header.index("email")
    return [line.split(",")[column] for line in lines[1:] if line]


if __name__ == "__main__":
    print("\n".join(emails(sys.argv[1] if len(sys.argv) > 1 else "/app/contacts.csv")))
