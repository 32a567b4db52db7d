"""Honest code scores in the sandbox exactly as it scores at home: `exec(prelude + code + test)` in
a fresh process of the same interpreter (with pytest's `raises`, which the sandbox's `raises`
stands in for). The controls are the shapes a model writing ordinary Python produces and that a
boundary copying only plain data got wrong; each runs on bubblewrap and on Docker."""

import subprocess
import sys
import textwrap

import pytest

from curriculab.training.sandbox import Limits, run_many
from curriculab.training.sandbox.docker_backend import client as docker_client

LIMITS = Limits(test_timeout_s=10.0, load_timeout_s=10.0)

LISTNODE = """
from typing import List, Optional


class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next
"""

# name: (code, entry point, test, prelude)
HONEST = {
    "returns_counter": (
        "from collections import Counter\ndef f(s):\n    return Counter(s)\n",
        "f",
        "from collections import Counter\nc = f('abca')\n"
        "assert c == Counter(a=2, b=1, c=1) and isinstance(c, Counter) and c.most_common(1) == [('a', 2)]",
    ),
    "returns_defaultdict": (
        "from collections import defaultdict\ndef f(words):\n    d = defaultdict(list)\n"
        "    for w in words:\n        d[w[0]].append(w)\n    return d\n",
        "f",
        "from collections import defaultdict\nd = f(['ab', 'ac', 'b'])\n"
        "assert isinstance(d, defaultdict) and d['a'] == ['ab', 'ac'] and d['zz'] == [] and 'zz' in d",
    ),
    "returns_ordereddict": (
        "from collections import OrderedDict\ndef f():\n    return OrderedDict([('b', 1), ('a', 2)])\n",
        "f",
        "from collections import OrderedDict\no = f()\nassert list(o) == ['b', 'a'] and o.popitem(last=False) == ('b', 1)\n"
        "assert type(o) is OrderedDict",
    ),
    "returns_namedtuple": (
        "from collections import namedtuple\nPoint = namedtuple('Point', 'x y')\ndef f():\n    return Point(1, 2)\n",
        "f",
        "p = f()\nassert p.x == 1 and p == (1, 2) and p == Point(1, 2) and isinstance(p, Point)\n"
        "assert type(p).__name__ == 'Point' and p._replace(x=5) == Point(5, 2)",
    ),
    "returns_fraction": (
        "from fractions import Fraction\ndef f(a, b):\n    return Fraction(a, b)\n",
        "f",
        "from fractions import Fraction\nassert f(1, 3) + Fraction(1, 3) == Fraction(2, 3) and f(2, 4).denominator == 2",
    ),
    "returns_decimal": (
        "from decimal import Decimal\ndef f(x):\n    return Decimal(x) / 4\n",
        "f",
        "from decimal import Decimal\nassert f('1.10') == Decimal('0.275') and str(f('1')) == '0.25'",
    ),
    "returns_dates": (
        "import datetime\ndef f(y):\n    return datetime.date(y, 1, 1) + datetime.timedelta(days=31)\n"
        "def g():\n    return datetime.datetime(2024, 5, 1, 12, 30, tzinfo=datetime.timezone.utc)\n",
        "f",
        "import datetime\nassert f(2024) == datetime.date(2024, 2, 1) and f(2024).weekday() == 3\n"
        "assert g().isoformat() == '2024-05-01T12:30:00+00:00' and g() - datetime.timedelta(hours=1) < g()",
    ),
    "takes_those_as_arguments": (
        "def f(c, d, o, p, fr, de, dt):\n    return (c['a'], d['x'], list(o), p.y, fr.denominator, str(de), dt.isoformat(), type(c).__name__)\n",
        "f",
        "from collections import Counter, defaultdict, OrderedDict, namedtuple\nfrom fractions import Fraction\n"
        "from decimal import Decimal\nimport datetime\nP = namedtuple('P', 'x y')\n"
        "assert f(Counter('aab'), defaultdict(int), OrderedDict(z=1, y=2), P(1, 7), Fraction(3, 6), Decimal('1.50'),"
        " datetime.date(2020, 2, 29)) == (2, 0, ['z', 'y'], 7, 2, '1.50', '2020-02-29', 'Counter')",
    ),
    "takes_a_function": (
        "def apply(f, xs, key=None):\n    return sorted((f(x) for x in xs), key=key)\n",
        "apply",
        "assert apply(lambda x: x * 2, [3, 1]) == [2, 6]\nassert apply(str, [10, 9], key=len) == ['9', '10']\n"
        "def neg(x):\n    return -x\nassert apply(neg, [1, 2]) == [-2, -1]",
    ),
    "returns_a_closure": (
        "def make_adder(n):\n    def add(x):\n        return x + n\n    return add\n",
        "make_adder",
        "add3 = make_adder(3)\nassert callable(add3) and add3(4) == 7 and list(map(add3, [1, 2])) == [4, 5]",
    ),
    "class_entry_point": (
        "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n"
        "        for i, x in enumerate(nums):\n            if target - x in seen:\n"
        "                return [seen[target - x], i]\n            seen[x] = i\n",
        "Solution",
        "assert Solution().twoSum([2, 7, 11, 15], 9) == [0, 1]\ns = Solution()\nassert s.twoSum([3, 3], 6) == [0, 1]",
    ),
    "prelude_classes_cross_field_by_field": (
        "class Solution:\n    def reverseList(self, head: Optional[ListNode]) -> Optional[ListNode]:\n"
        "        prev = None\n        while head:\n            head.next, prev, head = prev, head, head.next\n        return prev\n",
        "Solution",
        "def build(xs):\n    head = None\n    for x in reversed(xs):\n        head = ListNode(x, head)\n    return head\n"
        "def values(node):\n    out = []\n    while node:\n        out.append(node.val)\n        node = node.next\n    return out\n"
        "r = Solution().reverseList(build(list(range(3000))))\nassert isinstance(r, ListNode) and values(r) == list(range(2999, -1, -1))",
        LISTNODE,
    ),
    "test_calls_a_second_function": (
        "def encode_cyclic(s):\n    return s[1:] + s[:1]\n\ndef decode_cyclic(s):\n    return s[-1:] + s[:-1]\n",
        "decode_cyclic",
        "for w in ['abc', 'hello', '']:\n    assert decode_cyclic(encode_cyclic(w)) == w",
    ),
    "finite_generator": (
        "def evens(n):\n    for i in range(n):\n        if i % 2 == 0:\n            yield i\n",
        "evens",
        "import inspect\ng = evens(7)\nassert inspect.isgenerator(g) and next(g) == 0 and list(g) == [2, 4, 6]\n"
        "assert sum(evens(200_000)) == 9999900000",
    ),
    "infinite_generator": (
        "import itertools\ndef naturals():\n    n = 0\n    while True:\n        yield n\n        n += 1\n",
        "naturals",
        "import itertools\nassert list(itertools.islice(naturals(), 5)) == [0, 1, 2, 3, 4]\n"
        "g = naturals()\nassert [next(g) for _ in range(3)] == [0, 1, 2]",
    ),
    "exception_types_and_messages": (
        "import json\nclass InvalidInput(ValueError):\n    pass\n"
        "def parse(s):\n    if not s:\n        raise InvalidInput('empty input')\n    return json.loads(s)\n"
        "def lookup(d, k):\n    return d[k]\n",
        "parse",
        "import json\ntry:\n    parse('')\nexcept ValueError as e:\n    assert str(e) == 'empty input' and type(e).__name__ == 'InvalidInput'\n"
        "else:\n    raise AssertionError('no error')\n"
        "try:\n    parse('{')\nexcept json.JSONDecodeError as e:\n    assert e.pos == 1 and 'Expecting' in str(e)\n"
        "with raises(InvalidInput, match='empty'):\n    parse('')\n"
        "with raises(KeyError) as info:\n    lookup({}, 'k')\nassert str(info.value) == \"'k'\" and info.value.args == ('k',)\n"
        "assert parse('[1]') == [1]",
    ),
    "nesting_deeper_than_a_thousand": (
        "def deep(n):\n    x = []\n    for _ in range(n):\n        x = [x]\n    return x\n",
        "deep",
        "x = deep(3000)\nd = 0\nwhile x:\n    x = x[0]\n    d += 1\nassert d == 3000",
    ),
    "prints_more_than_4_mib": (
        "def f(n):\n    for _ in range(n):\n        print('x' * 1023)\n    return n\n",
        "f",
        "assert f(6 * 1024) == 6 * 1024",
    ),
    "multiprocessing": (
        "from multiprocessing import Pool\ndef square(x):\n    return x * x\n"
        "def f(xs):\n    with Pool(2) as pool:\n        return pool.map(square, xs)\n",
        "f",
        "assert f([1, 2, 3]) == [1, 4, 9]",
    ),
    "in_place_mutation_of_nested_arguments": (
        "def zero_first(grid, log):\n    grid[0][0] = 0\n    grid.append([9])\n    log['calls'] = log.get('calls', 0) + 1\n",
        "zero_first",
        "grid = [[1, 2], [3, 4]]\nrow = grid[0]\nlog = {}\nzero_first(grid, log)\n"
        "assert row == [0, 2] and grid[0] is row and grid == [[0, 2], [3, 4], [9]] and log == {'calls': 1}",
    ),
    "returns_its_argument": (
        "def sort_it(xs):\n    xs.sort()\n    return xs\n",
        "sort_it",
        "xs = [3, 1, 2]\nassert sort_it(xs) is xs and xs == [1, 2, 3]",
    ),
    "reads_an_instance_it_returns": (
        "class Box:\n    def __init__(self, v):\n        self.v = v\n    def double(self):\n        return self.v * 2\n"
        "    def __len__(self):\n        return self.v\n"
        "def make(v):\n    return Box(v)\n",
        "make",
        "b = make(3)\nassert b.v == 3 and b.double() == 6 and len(b) == 3 and isinstance(b, Box)",
    ),
}

# Wrong answers must not score more than at home: these fail there, and here.
WRONG = {
    "generator_is_not_a_list": (
        "def evens(n):\n    return (i for i in range(0, n, 2))\n",
        "evens",
        "assert evens(4) == [0, 2]",
    ),
    "wrong_exception_type": ("def f():\n    raise TypeError('x')\n", "f", "with raises(ValueError):\n    f()"),
    "mutation_not_made": (
        "def sort_it(xs):\n    return sorted(xs)\n",
        "sort_it",
        "xs = [2, 1]\nsort_it(xs)\nassert xs == [1, 2]",
    ),
    "closure_wrong": ("def make_adder(n):\n    return lambda x: x - n\n", "make_adder", "assert make_adder(1)(1) == 2"),
}


def at_home(code, test, prelude=""):
    """Whether the test passes with the completion in its own process, as a user would run it."""
    script = "from pytest import raises\n" + prelude + "\n" + code + "\n" + test
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    return done.returncode == 0, done.stderr[-500:]


@pytest.fixture(params=["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def backend(request, require_docker):
    if request.param == "docker":
        require_docker(docker_client() is not None)
    return request.param


def _score(cases, backend):
    names = sorted(cases)
    jobs = [(cases[n][0], cases[n][1], [("t", cases[n][2])], cases[n][3] if len(cases[n]) > 3 else "") for n in names]
    return dict(zip(names, run_many(jobs, LIMITS, workers=2, backend=backend)))


@pytest.mark.slow
def test_honest_controls_score_as_at_home(backend):
    results = _score(HONEST, backend)
    wrong = {}
    for name, result in results.items():
        home, why = at_home(HONEST[name][0], HONEST[name][2], HONEST[name][3] if len(HONEST[name]) > 3 else "")
        assert home, (name, why)  # an honest control passes at home
        outcome = result.outcomes[0]
        if outcome.passed != home:
            wrong[name] = (outcome.status, outcome.detail)
    assert wrong == {}, "\n".join(f"{k}: {v}" for k, v in wrong.items())


@pytest.mark.slow
def test_wrong_answers_score_no_more_than_at_home(backend):
    results = _score(WRONG, backend)
    for name, result in results.items():
        home, _ = at_home(WRONG[name][0], WRONG[name][2])
        assert not home and not result.outcomes[0].passed, name


def test_an_instance_compared_with_equals_is_refused_saying_why():
    code = (
        "class P:\n    def __init__(self, x):\n        self.x = x\n    def __eq__(self, other):\n        return True\n"
    )
    result = run_many([(code + "def f():\n    return P(1)\n", "f", [("t", "assert f() == 5")])], LIMITS)[0]
    assert not result.outcomes[0].passed
    assert result.outcomes[0].detail == textwrap.shorten(
        "the test compared solution.P, an object the completion defines, with ==: only its own __eq__ could decide, "
        "so the comparison is refused (compare its fields, or return data)",
        300,
    )
