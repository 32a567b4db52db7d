"""curriculab's own tiered problem set: 42 problems written for this project, from trivial (for
small models) to hard, each with a reference solution and at least two tests per tier.

Tiers: basic (the typical case), intermediate (more cases, mixed inputs), complex (larger or
compound inputs), edge (empty, boundary and extreme inputs).
"""

from __future__ import annotations

# (problem_id, entry_point, signature with docstring, reference body, {tier: [assert statements]})
PROBLEMS: list[tuple[str, str, str, str, dict[str, list[str]]]] = [
    (
        "add_two",
        "add",
        'def add(a: int, b: int) -> int:\n    """Return the sum of a and b."""\n',
        "    return a + b\n",
        {
            "basic": ["assert add(1, 2) == 3", "assert add(10, 5) == 15"],
            "intermediate": ["assert add(-3, 7) == 4", "assert add(-2, -8) == -10"],
            "complex": ["assert add(123456789, 987654321) == 1111111110", "assert add(10**18, 10**18) == 2 * 10**18"],
            "edge": ["assert add(0, 0) == 0", "assert add(-5, 5) == 0"],
        },
    ),
    (
        "is_even",
        "is_even",
        'def is_even(n: int) -> bool:\n    """Return True if n is even."""\n',
        "    return n % 2 == 0\n",
        {
            "basic": ["assert is_even(4) is True", "assert is_even(7) is False"],
            "intermediate": ["assert is_even(-6) is True", "assert is_even(-3) is False"],
            "complex": ["assert is_even(10**20 + 1) is False", "assert is_even(2**64) is True"],
            "edge": ["assert is_even(0) is True", "assert is_even(1) is False"],
        },
    ),
    (
        "reverse_string",
        "reverse",
        'def reverse(s: str) -> str:\n    """Return s reversed."""\n',
        "    return s[::-1]\n",
        {
            "basic": ["assert reverse('abc') == 'cba'", "assert reverse('hello') == 'olleh'"],
            "intermediate": ["assert reverse('a b c') == 'c b a'", "assert reverse('racecar') == 'racecar'"],
            "complex": [
                "assert reverse('x' * 500 + 'y') == 'y' + 'x' * 500",
                "assert reverse('héllo wörld') == 'dlröw olléh'",
            ],
            "edge": ["assert reverse('') == ''", "assert reverse('z') == 'z'"],
        },
    ),
    (
        "count_vowels",
        "count_vowels",
        'def count_vowels(s: str) -> int:\n    """Count the vowels (a, e, i, o, u, either case) in s."""\n',
        "    return sum(1 for c in s.lower() if c in 'aeiou')\n",
        {
            "basic": ["assert count_vowels('hello') == 2", "assert count_vowels('sky') == 0"],
            "intermediate": ["assert count_vowels('AEIOU') == 5", "assert count_vowels('Programming Language') == 7"],
            "complex": [
                "assert count_vowels('ab' * 1000) == 1000",
                "assert count_vowels('Queueing theory is unusual') == 12",
            ],
            "edge": ["assert count_vowels('') == 0", "assert count_vowels('12345!?') == 0"],
        },
    ),
    (
        "maximum",
        "maximum",
        'def maximum(xs: list[int]) -> int | None:\n    """Return the largest number in xs, or None for an empty list."""\n',
        "    return max(xs) if xs else None\n",
        {
            "basic": ["assert maximum([1, 5, 3]) == 5", "assert maximum([7]) == 7"],
            "intermediate": ["assert maximum([-1, -5, -3]) == -1", "assert maximum([2, 2, 2]) == 2"],
            "complex": ["assert maximum(list(range(10000))) == 9999", "assert maximum([10**30, -10**30, 5]) == 10**30"],
            "edge": ["assert maximum([]) is None", "assert maximum([0]) == 0"],
        },
    ),
    (
        "fizzbuzz",
        "fizzbuzz",
        'def fizzbuzz(n: int) -> list[str]:\n    """FizzBuzz from 1 to n: "Fizz" for multiples of 3, "Buzz" of 5, "FizzBuzz" of both, else the number."""\n',
        "    out = []\n    for i in range(1, n + 1):\n        out.append('FizzBuzz' if i % 15 == 0 else 'Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0 else str(i))\n    return out\n",
        {
            "basic": ["assert fizzbuzz(3) == ['1', '2', 'Fizz']", "assert fizzbuzz(5)[-1] == 'Buzz'"],
            "intermediate": ["assert fizzbuzz(15)[-1] == 'FizzBuzz'", "assert fizzbuzz(10).count('Fizz') == 3"],
            "complex": ["assert fizzbuzz(100).count('FizzBuzz') == 6", "assert len(fizzbuzz(1000)) == 1000"],
            "edge": ["assert fizzbuzz(0) == []", "assert fizzbuzz(1) == ['1']"],
        },
    ),
    (
        "factorial",
        "factorial",
        'def factorial(n: int) -> int:\n    """Return n! for n >= 0; raise ValueError for negative n."""\n',
        "    if n < 0:\n        raise ValueError('negative')\n    result = 1\n    for i in range(2, n + 1):\n        result *= i\n    return result\n",
        {
            "basic": ["assert factorial(3) == 6", "assert factorial(5) == 120"],
            "intermediate": ["assert factorial(10) == 3628800", "assert factorial(12) == 479001600"],
            "complex": [
                "assert factorial(30) == 265252859812191058636308480000000",
                "assert str(factorial(100)).endswith('0' * 24)",
            ],
            "edge": [
                "assert factorial(0) == 1",
                "try:\n    factorial(-1)\n    raise AssertionError('no error')\nexcept ValueError:\n    pass",
            ],
        },
    ),
    (
        "palindrome",
        "is_palindrome",
        'def is_palindrome(s: str) -> bool:\n    """True if s reads the same backwards, ignoring case and non-alphanumeric characters."""\n',
        "    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]\n",
        {
            "basic": ["assert is_palindrome('level') is True", "assert is_palindrome('hello') is False"],
            "intermediate": [
                "assert is_palindrome('Racecar') is True",
                "assert is_palindrome('No lemon, no melon') is True",
            ],
            "complex": [
                "assert is_palindrome('A man, a plan, a canal: Panama!') is True",
                "assert is_palindrome('ab' * 500 + 'c') is False",
            ],
            "edge": ["assert is_palindrome('') is True", "assert is_palindrome('.,!') is True"],
        },
    ),
    (
        "sum_digits",
        "sum_digits",
        'def sum_digits(n: int) -> int:\n    """Sum of the decimal digits of abs(n)."""\n',
        "    return sum(int(c) for c in str(abs(n)))\n",
        {
            "basic": ["assert sum_digits(123) == 6", "assert sum_digits(99) == 18"],
            "intermediate": ["assert sum_digits(-456) == 15", "assert sum_digits(1001) == 2"],
            "complex": ["assert sum_digits(10**50 - 1) == 450", "assert sum_digits(2**100) == 115"],
            "edge": ["assert sum_digits(0) == 0", "assert sum_digits(-7) == 7"],
        },
    ),
    (
        "celsius",
        "to_fahrenheit",
        'def to_fahrenheit(c: float) -> float:\n    """Convert Celsius to Fahrenheit, rounded to 2 decimals."""\n',
        "    return round(c * 9 / 5 + 32, 2)\n",
        {
            "basic": ["assert to_fahrenheit(0) == 32.0", "assert to_fahrenheit(100) == 212.0"],
            "intermediate": ["assert to_fahrenheit(-40) == -40.0", "assert to_fahrenheit(37) == 98.6"],
            "complex": ["assert to_fahrenheit(36.6) == 97.88", "assert to_fahrenheit(-273.15) == -459.67"],
            "edge": ["assert to_fahrenheit(0.01) == 32.02", "assert to_fahrenheit(1e6) == 1800032.0"],
        },
    ),
    (
        "word_count",
        "word_count",
        'def word_count(text: str) -> dict[str, int]:\n    """Count words (split on whitespace, lower-cased, punctuation .,!? stripped)."""\n',
        "    counts = {}\n    for w in text.split():\n        w = w.strip('.,!?').lower()\n        if w:\n            counts[w] = counts.get(w, 0) + 1\n    return counts\n",
        {
            "basic": ["assert word_count('a b a') == {'a': 2, 'b': 1}", "assert word_count('hello') == {'hello': 1}"],
            "intermediate": [
                "assert word_count('Hi hi HI!') == {'hi': 3}",
                "assert word_count('one, two. two!') == {'one': 1, 'two': 2}",
            ],
            "complex": [
                "assert word_count('x ' * 1000) == {'x': 1000}",
                "assert word_count('The cat and the hat.\\nThe end') == {'the': 3, 'cat': 1, 'and': 1, 'hat': 1, 'end': 1}",
            ],
            "edge": ["assert word_count('') == {}", "assert word_count(' ... !!! ') == {}"],
        },
    ),
    (
        "caesar",
        "caesar",
        'def caesar(text: str, shift: int) -> str:\n    """Shift letters by `shift` (wrapping, keeping case); leave other characters."""\n',
        "    out = []\n    for c in text:\n        if c.isascii() and c.isalpha():\n            base = ord('A') if c.isupper() else ord('a')\n            out.append(chr((ord(c) - base + shift) % 26 + base))\n        else:\n            out.append(c)\n    return ''.join(out)\n",
        {
            "basic": ["assert caesar('abc', 1) == 'bcd'", "assert caesar('xyz', 3) == 'abc'"],
            "intermediate": [
                "assert caesar('Hello, World!', 5) == 'Mjqqt, Btwqi!'",
                "assert caesar('bcd', -1) == 'abc'",
            ],
            "complex": [
                "assert caesar(caesar('The quick brown fox', 13), 13) == 'The quick brown fox'",
                "assert caesar('abc', 26 * 1000 + 2) == 'cde'",
            ],
            "edge": ["assert caesar('', 5) == ''", "assert caesar('123 !?', 7) == '123 !?'"],
        },
    ),
    (
        "gcd",
        "gcd",
        'def gcd(a: int, b: int) -> int:\n    """Greatest common divisor (non-negative); gcd(0, 0) is 0."""\n',
        "    a, b = abs(a), abs(b)\n    while b:\n        a, b = b, a % b\n    return a\n",
        {
            "basic": ["assert gcd(12, 8) == 4", "assert gcd(7, 3) == 1"],
            "intermediate": ["assert gcd(-12, 18) == 6", "assert gcd(100, 75) == 25"],
            "complex": ["assert gcd(2**40 * 3, 2**35 * 9) == 2**35 * 3", "assert gcd(832040, 514229) == 1"],
            "edge": ["assert gcd(0, 5) == 5", "assert gcd(0, 0) == 0"],
        },
    ),
    (
        "primes_up_to",
        "primes_up_to",
        'def primes_up_to(n: int) -> list[int]:\n    """All primes <= n, ascending."""\n',
        "    if n < 2:\n        return []\n    sieve = [True] * (n + 1)\n    sieve[0] = sieve[1] = False\n    for i in range(2, int(n ** 0.5) + 1):\n        if sieve[i]:\n            sieve[i * i::i] = [False] * len(range(i * i, n + 1, i))\n    return [i for i, p in enumerate(sieve) if p]\n",
        {
            "basic": ["assert primes_up_to(10) == [2, 3, 5, 7]", "assert primes_up_to(2) == [2]"],
            "intermediate": [
                "assert primes_up_to(30) == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]",
                "assert len(primes_up_to(100)) == 25",
            ],
            "complex": ["assert len(primes_up_to(100000)) == 9592", "assert primes_up_to(10**5)[-1] == 99991"],
            "edge": ["assert primes_up_to(1) == []", "assert primes_up_to(-10) == []"],
        },
    ),
    (
        "flatten",
        "flatten",
        'def flatten(xs: list) -> list:\n    """Flatten arbitrarily nested lists into one list, keeping order."""\n',
        "    out = []\n    stack = [iter(xs)]\n    while stack:\n        for item in stack[-1]:\n            if isinstance(item, list):\n                stack.append(iter(item))\n                break\n            out.append(item)\n        else:\n            stack.pop()\n    return out\n",
        {
            "basic": ["assert flatten([1, [2, 3]]) == [1, 2, 3]", "assert flatten([[1], [2]]) == [1, 2]"],
            "intermediate": [
                "assert flatten([1, [2, [3, [4]]], 5]) == [1, 2, 3, 4, 5]",
                "assert flatten([['a'], [], ['b', ['c']]]) == ['a', 'b', 'c']",
            ],
            "complex": [
                "deep = [1]\nfor _ in range(200):\n    deep = [deep]\nassert flatten(deep) == [1]",
                "assert flatten([[i, [i]] for i in range(500)]) == [x for i in range(500) for x in (i, i)]",
            ],
            "edge": ["assert flatten([]) == []", "assert flatten([[], [[]]]) == []"],
        },
    ),
    (
        "run_length",
        "rle",
        'def rle(s: str) -> str:\n    """Run-length encode: "aaabcc" -> "a3b1c2"."""\n',
        "    out = []\n    i = 0\n    while i < len(s):\n        j = i\n        while j < len(s) and s[j] == s[i]:\n            j += 1\n        out.append(f'{s[i]}{j - i}')\n        i = j\n    return ''.join(out)\n",
        {
            "basic": ["assert rle('aaabcc') == 'a3b1c2'", "assert rle('ab') == 'a1b1'"],
            "intermediate": ["assert rle('aabbaa') == 'a2b2a2'", "assert rle('zzzzzzzzzzzz') == 'z12'"],
            "complex": ["assert rle('x' * 1000 + 'y') == 'x1000y1'", "assert rle('abc' * 3) == 'a1b1c1' * 3"],
            "edge": ["assert rle('') == ''", "assert rle('q') == 'q1'"],
        },
    ),
    (
        "balanced",
        "balanced",
        'def balanced(s: str) -> bool:\n    """True if the brackets ()[]{} in s are balanced; other characters are ignored."""\n',
        "    pairs = {')': '(', ']': '[', '}': '{'}\n    stack = []\n    for c in s:\n        if c in '([{':\n            stack.append(c)\n        elif c in pairs:\n            if not stack or stack.pop() != pairs[c]:\n                return False\n    return not stack\n",
        {
            "basic": ["assert balanced('()') is True", "assert balanced('(]') is False"],
            "intermediate": ["assert balanced('{[()()]}') is True", "assert balanced('((') is False"],
            "complex": [
                "assert balanced('(' * 5000 + ')' * 5000) is True",
                "assert balanced('f(a[i], {k: v})') is True",
            ],
            "edge": ["assert balanced('') is True", "assert balanced(')(') is False"],
        },
    ),
    (
        "binary_search",
        "binary_search",
        'def binary_search(xs: list[int], target: int) -> int:\n    """Index of target in the sorted list xs, or -1."""\n',
        "    lo, hi = 0, len(xs) - 1\n    while lo <= hi:\n        mid = (lo + hi) // 2\n        if xs[mid] == target:\n            return mid\n        if xs[mid] < target:\n            lo = mid + 1\n        else:\n            hi = mid - 1\n    return -1\n",
        {
            "basic": ["assert binary_search([1, 3, 5, 7], 5) == 2", "assert binary_search([1, 3, 5, 7], 4) == -1"],
            "intermediate": [
                "assert binary_search([-10, -2, 0, 9], -10) == 0",
                "assert binary_search([-10, -2, 0, 9], 9) == 3",
            ],
            "complex": [
                "assert binary_search(list(range(0, 10**6, 2)), 777776) == 388888",
                "assert binary_search(list(range(0, 10**6, 2)), 777777) == -1",
            ],
            "edge": ["assert binary_search([], 1) == -1", "assert binary_search([4], 4) == 0"],
        },
    ),
    (
        "roman",
        "to_roman",
        'def to_roman(n: int) -> str:\n    """Roman numeral for 1 <= n <= 3999."""\n',
        "    table = [(1000, 'M'), (900, 'CM'), (500, 'D'), (400, 'CD'), (100, 'C'), (90, 'XC'), (50, 'L'), (40, 'XL'), (10, 'X'), (9, 'IX'), (5, 'V'), (4, 'IV'), (1, 'I')]\n    out = ''\n    for value, letters in table:\n        while n >= value:\n            out += letters\n            n -= value\n    return out\n",
        {
            "basic": ["assert to_roman(3) == 'III'", "assert to_roman(10) == 'X'"],
            "intermediate": ["assert to_roman(4) == 'IV'", "assert to_roman(94) == 'XCIV'"],
            "complex": ["assert to_roman(1994) == 'MCMXCIV'", "assert to_roman(2888) == 'MMDCCCLXXXVIII'"],
            "edge": ["assert to_roman(1) == 'I'", "assert to_roman(3999) == 'MMMCMXCIX'"],
        },
    ),
    (
        "from_roman",
        "from_roman",
        'def from_roman(s: str) -> int:\n    """Integer value of a valid Roman numeral."""\n',
        "    values = {'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}\n    total = 0\n    for i, c in enumerate(s):\n        v = values[c]\n        total += -v if i + 1 < len(s) and values[s[i + 1]] > v else v\n    return total\n",
        {
            "basic": ["assert from_roman('III') == 3", "assert from_roman('XV') == 15"],
            "intermediate": ["assert from_roman('IX') == 9", "assert from_roman('XLII') == 42"],
            "complex": ["assert from_roman('MCMXCIV') == 1994", "assert from_roman('MMMDCCCLXXXVIII') == 3888"],
            "edge": ["assert from_roman('I') == 1", "assert from_roman('MMMCMXCIX') == 3999"],
        },
    ),
    (
        "parse_kv",
        "parse_kv",
        'def parse_kv(text: str) -> dict[str, str]:\n    """Parse "key=value" pairs separated by ";" (spaces around keys and values trimmed; pairs without "=" skipped)."""\n',
        "    out = {}\n    for part in text.split(';'):\n        if '=' in part:\n            k, v = part.split('=', 1)\n            out[k.strip()] = v.strip()\n    return out\n",
        {
            "basic": ["assert parse_kv('a=1;b=2') == {'a': '1', 'b': '2'}", "assert parse_kv('x=y') == {'x': 'y'}"],
            "intermediate": [
                "assert parse_kv(' a = 1 ; b= two ') == {'a': '1', 'b': 'two'}",
                "assert parse_kv('a=1;junk;b=2') == {'a': '1', 'b': '2'}",
            ],
            "complex": [
                "assert parse_kv('url=http://x/?q=1;n=2') == {'url': 'http://x/?q=1', 'n': '2'}",
                "assert parse_kv(';'.join(f'k{i}={i}' for i in range(300)))['k299'] == '299'",
            ],
            "edge": ["assert parse_kv('') == {}", "assert parse_kv('a=;=b') == {'a': '', '': 'b'}"],
        },
    ),
    (
        "parse_csv_line",
        "parse_csv_line",
        'def parse_csv_line(line: str) -> list[str]:\n    """Split one CSV line on commas, honouring double quotes ("" inside quotes is a quote)."""\n',
        "    fields, field, quoted, i = [], '', False, 0\n    while i < len(line):\n        c = line[i]\n        if quoted:\n            if c == '\"' and i + 1 < len(line) and line[i + 1] == '\"':\n                field += '\"'\n                i += 1\n            elif c == '\"':\n                quoted = False\n            else:\n                field += c\n        elif c == '\"':\n            quoted = True\n        elif c == ',':\n            fields.append(field)\n            field = ''\n        else:\n            field += c\n        i += 1\n    fields.append(field)\n    return fields\n",
        {
            "basic": [
                "assert parse_csv_line('a,b,c') == ['a', 'b', 'c']",
                "assert parse_csv_line('1,2') == ['1', '2']",
            ],
            "intermediate": [
                "assert parse_csv_line('\"a,b\",c') == ['a,b', 'c']",
                "assert parse_csv_line('x,,y') == ['x', '', 'y']",
            ],
            "complex": [
                'assert parse_csv_line(\'"say ""hi""",2\') == [\'say "hi"\', \'2\']',
                "assert parse_csv_line(','.join(['\"q,\"'] * 50)) == ['q,'] * 50",
            ],
            "edge": ["assert parse_csv_line('') == ['']", "assert parse_csv_line(',') == ['', '']"],
        },
    ),
    (
        "parse_duration",
        "parse_duration",
        'def parse_duration(text: str) -> int:\n    """Seconds in a duration like "1h30m", "45s", "2d3h" (units d, h, m, s)."""\n',
        "    import re\n    units = {'d': 86400, 'h': 3600, 'm': 60, 's': 1}\n    parts = re.findall(r'(\\d+)([dhms])', text)\n    return sum(int(n) * units[u] for n, u in parts)\n",
        {
            "basic": ["assert parse_duration('45s') == 45", "assert parse_duration('2m') == 120"],
            "intermediate": ["assert parse_duration('1h30m') == 5400", "assert parse_duration('2d3h') == 183600"],
            "complex": ["assert parse_duration('1d1h1m1s') == 90061", "assert parse_duration('100h') == 360000"],
            "edge": ["assert parse_duration('') == 0", "assert parse_duration('0s') == 0"],
        },
    ),
    (
        "eval_rpn",
        "eval_rpn",
        'def eval_rpn(tokens: list[str]) -> int:\n    """Evaluate integer Reverse Polish Notation with + - * and / (truncating toward zero)."""\n',
        "    stack = []\n    for t in tokens:\n        if t in ('+', '-', '*', '/'):\n            b, a = stack.pop(), stack.pop()\n            stack.append(a + b if t == '+' else a - b if t == '-' else a * b if t == '*' else int(a / b))\n        else:\n            stack.append(int(t))\n    return stack[0]\n",
        {
            "basic": ["assert eval_rpn(['2', '3', '+']) == 5", "assert eval_rpn(['4', '2', '*']) == 8"],
            "intermediate": [
                "assert eval_rpn(['2', '1', '+', '3', '*']) == 9",
                "assert eval_rpn(['4', '13', '5', '/', '+']) == 6",
            ],
            "complex": [
                "assert eval_rpn(['10', '6', '9', '3', '+', '-11', '*', '/', '*', '17', '+', '5', '+']) == 22",
                "assert eval_rpn(['-7', '2', '/']) == -3",
            ],
            "edge": ["assert eval_rpn(['42']) == 42", "assert eval_rpn(['0', '5', '-']) == -5"],
        },
    ),
    (
        "matrix_mult",
        "matmul",
        'def matmul(a: list[list[int]], b: list[list[int]]) -> list[list[int]]:\n    """Matrix product of a (n×m) and b (m×p)."""\n',
        "    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]\n",
        {
            "basic": [
                "assert matmul([[1, 2], [3, 4]], [[5, 6], [7, 8]]) == [[19, 22], [43, 50]]",
                "assert matmul([[2]], [[3]]) == [[6]]",
            ],
            "intermediate": [
                "assert matmul([[1, 2, 3]], [[1], [2], [3]]) == [[14]]",
                "assert matmul([[1], [2]], [[3, 4]]) == [[3, 4], [6, 8]]",
            ],
            "complex": [
                "i = [[int(r == c) for c in range(20)] for r in range(20)]\nm = [[r * 20 + c for c in range(20)] for r in range(20)]\nassert matmul(m, i) == m",
                "assert matmul([[1, 1], [1, 0]], [[1, 1], [1, 0]]) == [[2, 1], [1, 1]]",
            ],
            "edge": ["assert matmul([[0, 0]], [[0], [0]]) == [[0]]", "assert matmul([[-1]], [[-1]]) == [[1]]"],
        },
    ),
    (
        "two_sum",
        "two_sum",
        'def two_sum(nums: list[int], target: int) -> tuple[int, int] | None:\n    """Indices (i, j), i < j, of the first pair (by j, then i) summing to target, or None."""\n',
        "    seen = {}\n    for j, x in enumerate(nums):\n        if target - x in seen:\n            return (seen[target - x], j)\n        seen.setdefault(x, j)\n    return None\n",
        {
            "basic": ["assert two_sum([2, 7, 11, 15], 9) == (0, 1)", "assert two_sum([3, 2, 4], 6) == (1, 2)"],
            "intermediate": ["assert two_sum([3, 3], 6) == (0, 1)", "assert two_sum([-1, -2, -3], -5) == (1, 2)"],
            "complex": [
                "assert two_sum(list(range(10000)), 19997) == (9998, 9999)",
                "assert two_sum([5, 1, 5, 1], 2) == (1, 3)",
            ],
            "edge": ["assert two_sum([], 1) is None", "assert two_sum([1], 2) is None"],
        },
    ),
    (
        "anagrams",
        "group_anagrams",
        'def group_anagrams(words: list[str]) -> list[list[str]]:\n    """Group anagrams; groups ordered by first appearance, words in each group in input order."""\n',
        "    groups = {}\n    for w in words:\n        groups.setdefault(''.join(sorted(w)), []).append(w)\n    return list(groups.values())\n",
        {
            "basic": [
                "assert group_anagrams(['ab', 'ba', 'c']) == [['ab', 'ba'], ['c']]",
                "assert group_anagrams(['x']) == [['x']]",
            ],
            "intermediate": [
                "assert group_anagrams(['eat', 'tea', 'tan', 'ate', 'nat', 'bat']) == [['eat', 'tea', 'ate'], ['tan', 'nat'], ['bat']]",
                "assert group_anagrams(['a', 'a']) == [['a', 'a']]",
            ],
            "complex": [
                "assert len(group_anagrams([''.join(p) for p in __import__('itertools').permutations('abcde')])) == 1",
                "assert group_anagrams(['listen', 'silent', 'enlist', 'google']) == [['listen', 'silent', 'enlist'], ['google']]",
            ],
            "edge": ["assert group_anagrams([]) == []", "assert group_anagrams(['', '']) == [['', '']]"],
        },
    ),
    (
        "lcs",
        "lcs_length",
        'def lcs_length(a: str, b: str) -> int:\n    """Length of the longest common subsequence of a and b."""\n',
        "    prev = [0] * (len(b) + 1)\n    for x in a:\n        cur = [0]\n        for j, y in enumerate(b):\n            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))\n        prev = cur\n    return prev[-1]\n",
        {
            "basic": ["assert lcs_length('abcde', 'ace') == 3", "assert lcs_length('abc', 'abc') == 3"],
            "intermediate": ["assert lcs_length('abc', 'def') == 0", "assert lcs_length('AGGTAB', 'GXTXAYB') == 4"],
            "complex": [
                "assert lcs_length('ab' * 300, 'ba' * 300) == 599",
                "assert lcs_length('x' * 800, 'x' * 500) == 500",
            ],
            "edge": ["assert lcs_length('', 'abc') == 0", "assert lcs_length('', '') == 0"],
        },
    ),
    (
        "edit_distance",
        "edit_distance",
        'def edit_distance(a: str, b: str) -> int:\n    """Levenshtein distance (insert, delete, substitute each cost 1)."""\n',
        "    prev = list(range(len(b) + 1))\n    for i, x in enumerate(a, 1):\n        cur = [i]\n        for j, y in enumerate(b, 1):\n            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))\n        prev = cur\n    return prev[-1]\n",
        {
            "basic": ["assert edit_distance('kitten', 'sitting') == 3", "assert edit_distance('abc', 'abc') == 0"],
            "intermediate": [
                "assert edit_distance('flaw', 'lawn') == 2",
                "assert edit_distance('intention', 'execution') == 5",
            ],
            "complex": [
                "assert edit_distance('a' * 400, 'b' * 400) == 400",
                "assert edit_distance('ab' * 200, 'ba' * 200) == 2",
            ],
            "edge": ["assert edit_distance('', 'abc') == 3", "assert edit_distance('', '') == 0"],
        },
    ),
    (
        "merge_intervals",
        "merge_intervals",
        'def merge_intervals(xs: list[tuple[int, int]]) -> list[tuple[int, int]]:\n    """Merge overlapping or touching closed intervals; result sorted by start."""\n',
        "    out = []\n    for s, e in sorted(xs):\n        if out and s <= out[-1][1]:\n            out[-1] = (out[-1][0], max(out[-1][1], e))\n        else:\n            out.append((s, e))\n    return out\n",
        {
            "basic": [
                "assert merge_intervals([(1, 3), (2, 6)]) == [(1, 6)]",
                "assert merge_intervals([(1, 2), (5, 6)]) == [(1, 2), (5, 6)]",
            ],
            "intermediate": [
                "assert merge_intervals([(8, 10), (1, 3), (2, 6), (15, 18)]) == [(1, 6), (8, 10), (15, 18)]",
                "assert merge_intervals([(1, 4), (4, 5)]) == [(1, 5)]",
            ],
            "complex": [
                "assert merge_intervals([(i, i + 1) for i in range(0, 2000, 2)]) == [(i, i + 1) for i in range(0, 2000, 2)]",
                "assert merge_intervals([(i, i + 2) for i in range(1000)]) == [(0, 1001)]",
            ],
            "edge": ["assert merge_intervals([]) == []", "assert merge_intervals([(5, 5)]) == [(5, 5)]"],
        },
    ),
    (
        "top_k",
        "top_k_frequent",
        'def top_k_frequent(xs: list[int], k: int) -> list[int]:\n    """The k most frequent values, most frequent first; ties by smaller value first."""\n',
        "    counts = {}\n    for x in xs:\n        counts[x] = counts.get(x, 0) + 1\n    return sorted(counts, key=lambda v: (-counts[v], v))[:k]\n",
        {
            "basic": ["assert top_k_frequent([1, 1, 1, 2, 2, 3], 2) == [1, 2]", "assert top_k_frequent([4], 1) == [4]"],
            "intermediate": [
                "assert top_k_frequent([3, 1, 3, 1, 2], 2) == [1, 3]",
                "assert top_k_frequent([5, 5, 6], 5) == [5, 6]",
            ],
            "complex": [
                "assert top_k_frequent([i % 7 for i in range(7000)] + [3], 1) == [3]",
                "assert top_k_frequent(list(range(1000)) * 2 + [999], 3) == [999, 0, 1]",
            ],
            "edge": ["assert top_k_frequent([], 3) == []", "assert top_k_frequent([1, 2], 0) == []"],
        },
    ),
    (
        "lru_cache_sim",
        "lru_misses",
        'def lru_misses(capacity: int, requests: list[int]) -> int:\n    """Cache misses of an LRU cache of the given capacity serving the requests in order."""\n',
        "    from collections import OrderedDict\n    cache, misses = OrderedDict(), 0\n    for r in requests:\n        if r in cache:\n            cache.move_to_end(r)\n            continue\n        misses += 1\n        if capacity == 0:\n            continue\n        cache[r] = True\n        if len(cache) > capacity:\n            cache.popitem(last=False)\n    return misses\n",
        {
            "basic": ["assert lru_misses(2, [1, 2, 1, 3, 2]) == 4", "assert lru_misses(1, [1, 1, 1]) == 1"],
            "intermediate": [
                "assert lru_misses(3, [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]) == 10",
                "assert lru_misses(2, [1, 2, 3, 1, 2, 3]) == 6",
            ],
            "complex": [
                "assert lru_misses(100, list(range(100)) * 50) == 100",
                "assert lru_misses(99, list(range(100)) * 50) == 5000",
            ],
            "edge": ["assert lru_misses(0, [1, 1]) == 2", "assert lru_misses(5, []) == 0"],
        },
    ),
    (
        "topo_sort",
        "topo_order",
        'def topo_order(n: int, edges: list[tuple[int, int]]) -> list[int] | None:\n    """Topological order of nodes 0..n-1 (edge (a, b): a before b), smallest available node first; None if cyclic."""\n',
        "    import heapq\n    indeg = [0] * n\n    out = [[] for _ in range(n)]\n    for a, b in edges:\n        out[a].append(b)\n        indeg[b] += 1\n    heap = [i for i in range(n) if indeg[i] == 0]\n    heapq.heapify(heap)\n    order = []\n    while heap:\n        v = heapq.heappop(heap)\n        order.append(v)\n        for w in out[v]:\n            indeg[w] -= 1\n            if indeg[w] == 0:\n                heapq.heappush(heap, w)\n    return order if len(order) == n else None\n",
        {
            "basic": ["assert topo_order(3, [(0, 1), (1, 2)]) == [0, 1, 2]", "assert topo_order(2, []) == [0, 1]"],
            "intermediate": [
                "assert topo_order(4, [(3, 0), (2, 0), (0, 1)]) == [2, 3, 0, 1]",
                "assert topo_order(3, [(0, 1), (1, 0)]) is None",
            ],
            "complex": [
                "assert topo_order(1000, [(i + 1, i) for i in range(999)]) == list(range(999, -1, -1))",
                "assert topo_order(6, [(5, 2), (5, 0), (4, 0), (4, 1), (2, 3), (3, 1)]) == [4, 5, 0, 2, 3, 1]",
            ],
            "edge": ["assert topo_order(0, []) == []", "assert topo_order(1, [(0, 0)]) is None"],
        },
    ),
    (
        "shortest_path",
        "shortest_path",
        'def shortest_path(n: int, edges: list[tuple[int, int, int]], src: int, dst: int) -> int:\n    """Length of the shortest path on a directed graph with non-negative weights (a, b, w); -1 if unreachable."""\n',
        "    import heapq\n    adj = [[] for _ in range(n)]\n    for a, b, w in edges:\n        adj[a].append((b, w))\n    dist = [None] * n\n    heap = [(0, src)]\n    while heap:\n        d, v = heapq.heappop(heap)\n        if dist[v] is not None:\n            continue\n        dist[v] = d\n        for w, c in adj[v]:\n            if dist[w] is None:\n                heapq.heappush(heap, (d + c, w))\n    return -1 if dist[dst] is None else dist[dst]\n",
        {
            "basic": [
                "assert shortest_path(3, [(0, 1, 1), (1, 2, 1)], 0, 2) == 2",
                "assert shortest_path(2, [(0, 1, 5)], 0, 1) == 5",
            ],
            "intermediate": [
                "assert shortest_path(3, [(0, 1, 4), (0, 2, 1), (2, 1, 1)], 0, 1) == 2",
                "assert shortest_path(3, [(0, 1, 1)], 0, 2) == -1",
            ],
            "complex": [
                "assert shortest_path(1000, [(i, i + 1, 1) for i in range(999)] + [(0, 999, 500)], 0, 999) == 500",
                "assert shortest_path(4, [(0, 1, 0), (1, 2, 0), (2, 3, 0)], 0, 3) == 0",
            ],
            "edge": ["assert shortest_path(1, [], 0, 0) == 0", "assert shortest_path(2, [(1, 0, 1)], 0, 1) == -1"],
        },
    ),
    (
        "knapsack",
        "knapsack",
        'def knapsack(items: list[tuple[int, int]], capacity: int) -> int:\n    """Best total value of (weight, value) items, each used at most once, within capacity."""\n',
        "    best = [0] * (capacity + 1)\n    for w, v in items:\n        for c in range(capacity, w - 1, -1):\n            best[c] = max(best[c], best[c - w] + v)\n    return best[capacity]\n",
        {
            "basic": ["assert knapsack([(1, 1), (3, 4), (4, 5), (5, 7)], 7) == 9", "assert knapsack([(2, 3)], 2) == 3"],
            "intermediate": [
                "assert knapsack([(5, 10), (4, 40), (6, 30), (3, 50)], 10) == 90",
                "assert knapsack([(3, 5)], 2) == 0",
            ],
            "complex": [
                "assert knapsack([(w, w * 2) for w in range(1, 60)], 500) == 1000",
                "assert knapsack([(10, 60), (20, 100), (30, 120)], 50) == 220",
            ],
            "edge": ["assert knapsack([], 10) == 0", "assert knapsack([(1, 5)], 0) == 0"],
        },
    ),
    (
        "coin_change",
        "min_coins",
        'def min_coins(coins: list[int], amount: int) -> int:\n    """Fewest coins summing to amount (unlimited supply), or -1."""\n',
        "    inf = amount + 1\n    best = [0] + [inf] * amount\n    for a in range(1, amount + 1):\n        for c in coins:\n            if c <= a and best[a - c] + 1 < best[a]:\n                best[a] = best[a - c] + 1\n    return best[amount] if best[amount] <= amount else -1\n",
        {
            "basic": ["assert min_coins([1, 2, 5], 11) == 3", "assert min_coins([1], 3) == 3"],
            "intermediate": ["assert min_coins([2], 3) == -1", "assert min_coins([1, 3, 4], 6) == 2"],
            "complex": ["assert min_coins([186, 419, 83, 408], 6249) == 20", "assert min_coins([7, 11], 10000) == 912"],
            "edge": ["assert min_coins([1, 2], 0) == 0", "assert min_coins([], 5) == -1"],
        },
    ),
    (
        "bank_account",
        "simulate_account",
        'def simulate_account(ops: list[tuple[str, int]]) -> tuple[int, int]:\n    """Apply ("deposit"|"withdraw", amount) ops to a zero balance; a withdrawal beyond the balance is refused. Return (balance, refused count)."""\n',
        "    balance = refused = 0\n    for op, amount in ops:\n        if op == 'deposit':\n            balance += amount\n        elif amount <= balance:\n            balance -= amount\n        else:\n            refused += 1\n    return (balance, refused)\n",
        {
            "basic": [
                "assert simulate_account([('deposit', 10), ('withdraw', 3)]) == (7, 0)",
                "assert simulate_account([('withdraw', 1)]) == (0, 1)",
            ],
            "intermediate": [
                "assert simulate_account([('deposit', 5), ('withdraw', 10), ('withdraw', 5)]) == (0, 1)",
                "assert simulate_account([('deposit', 1)] * 3) == (3, 0)",
            ],
            "complex": [
                "assert simulate_account([('deposit', 1), ('withdraw', 2)] * 500) == (0, 250)",
                "assert simulate_account([('deposit', 100)] + [('withdraw', 30)] * 4) == (10, 1)",
            ],
            "edge": ["assert simulate_account([]) == (0, 0)", "assert simulate_account([('withdraw', 0)]) == (0, 0)"],
        },
    ),
    (
        "spiral",
        "spiral",
        'def spiral(matrix: list[list[int]]) -> list[int]:\n    """Elements of a matrix in clockwise spiral order from the top left."""\n',
        "    out = []\n    m = [row[:] for row in matrix]\n    while m:\n        out += m.pop(0)\n        m = [list(r) for r in zip(*m)][::-1]\n    return out\n",
        {
            "basic": ["assert spiral([[1, 2], [3, 4]]) == [1, 2, 4, 3]", "assert spiral([[1, 2, 3]]) == [1, 2, 3]"],
            "intermediate": [
                "assert spiral([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == [1, 2, 3, 6, 9, 8, 7, 4, 5]",
                "assert spiral([[1], [2], [3]]) == [1, 2, 3]",
            ],
            "complex": [
                "assert spiral([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]) == [1, 2, 3, 4, 8, 12, 11, 10, 9, 5, 6, 7]",
                "assert sorted(spiral([[r * 30 + c for c in range(30)] for r in range(30)])) == list(range(900))",
            ],
            "edge": ["assert spiral([]) == []", "assert spiral([[7]]) == [7]"],
        },
    ),
    (
        "valid_ipv4",
        "is_ipv4",
        'def is_ipv4(s: str) -> bool:\n    """True for dotted-quad IPv4 addresses: four decimal parts 0-255, no leading zeros, nothing else."""\n',
        "    parts = s.split('.')\n    if len(parts) != 4:\n        return False\n    for p in parts:\n        if not p.isdigit() or not p.isascii() or (len(p) > 1 and p[0] == '0') or int(p) > 255:\n            return False\n    return True\n",
        {
            "basic": ["assert is_ipv4('192.168.0.1') is True", "assert is_ipv4('256.1.1.1') is False"],
            "intermediate": ["assert is_ipv4('01.2.3.4') is False", "assert is_ipv4('1.2.3') is False"],
            "complex": ["assert is_ipv4('255.255.255.255') is True", "assert is_ipv4('1.2.3.4.5') is False"],
            "edge": ["assert is_ipv4('') is False", "assert is_ipv4('0.0.0.0') is True"],
        },
    ),
    (
        "json_depth",
        "max_depth",
        'def max_depth(value) -> int:\n    """Nesting depth of JSON-like data: scalars 0, a list or dict adds 1 to its deepest member."""\n',
        "    if isinstance(value, dict):\n        return 1 + max((max_depth(v) for v in value.values()), default=0)\n    if isinstance(value, list):\n        return 1 + max((max_depth(v) for v in value), default=0)\n    return 0\n",
        {
            "basic": ["assert max_depth([1, 2]) == 1", "assert max_depth(5) == 0"],
            "intermediate": ["assert max_depth({'a': [1, {'b': 2}]}) == 3", "assert max_depth([[], [[]]]) == 3"],
            "complex": [
                "d = 0\nfor _ in range(200):\n    d = [d]\nassert max_depth(d) == 200",
                "assert max_depth({'k': {'k': {'k': {}}}}) == 4",
            ],
            "edge": ["assert max_depth([]) == 1", "assert max_depth({}) == 1"],
        },
    ),
    (
        "interval_scheduling",
        "max_meetings",
        'def max_meetings(meetings: list[tuple[int, int]]) -> int:\n    """Most non-overlapping (start, end) meetings one room can hold (a meeting may start when another ends)."""\n',
        "    count, end = 0, None\n    for s, e in sorted(meetings, key=lambda m: (m[1], m[0])):\n        if end is None or s >= end:\n            count += 1\n            end = e\n    return count\n",
        {
            "basic": ["assert max_meetings([(1, 2), (3, 4)]) == 2", "assert max_meetings([(1, 5), (2, 3)]) == 1"],
            "intermediate": [
                "assert max_meetings([(1, 2), (2, 3), (3, 4)]) == 3",
                "assert max_meetings([(0, 6), (1, 2), (3, 4), (5, 7)]) == 3",
            ],
            "complex": [
                "assert max_meetings([(i, i + 2) for i in range(1000)]) == 500",
                "assert max_meetings([(1, 10)] * 50 + [(10, 11)]) == 2",
            ],
            "edge": ["assert max_meetings([]) == 0", "assert max_meetings([(3, 3), (3, 3)]) == 2"],
        },
    ),
    (
        "base_convert",
        "to_base",
        'def to_base(n: int, base: int) -> str:\n    """n (may be negative) in the given base 2-36, digits 0-9 then lowercase letters."""\n',
        "    digits = '0123456789abcdefghijklmnopqrstuvwxyz'\n    if n == 0:\n        return '0'\n    sign, n, out = '-' if n < 0 else '', abs(n), ''\n    while n:\n        n, r = divmod(n, base)\n        out = digits[r] + out\n    return sign + out\n",
        {
            "basic": ["assert to_base(10, 2) == '1010'", "assert to_base(255, 16) == 'ff'"],
            "intermediate": ["assert to_base(-8, 8) == '-10'", "assert to_base(35, 36) == 'z'"],
            "complex": [
                "assert to_base(2**100, 16) == '1' + '0' * 25",
                "assert int(to_base(123456789, 7), 7) == 123456789",
            ],
            "edge": ["assert to_base(0, 2) == '0'", "assert to_base(1, 36) == '1'"],
        },
    ),
]
