import sys
sys.path.insert(0, "/app")
from textutil import slugify

assert slugify("Hello World") == "hello_world"  # the old underscore style
