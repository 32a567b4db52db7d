import sys
sys.path.insert(0, "/app")
from textutil import slugify

assert slugify("Hello World") == "hello-world"
assert slugify("  Trim  me  ") == "trim-me"
assert slugify("C'est la vie!") == "c-est-la-vie"
assert slugify("a--b") == "a-b"
print("ok")
