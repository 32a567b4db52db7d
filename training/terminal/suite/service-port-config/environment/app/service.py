import sys

PORT = 5000


def describe():
    return f"inventory listening on {PORT}"


if __name__ == "__main__":
    print(describe())
