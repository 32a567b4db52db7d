"""Milestones of this task, checked from the files the agent left; milestones.py (the suite's shared
final step) stops every other process, then writes /logs/verifier/reward.json."""

from milestones import APP, finish, read, run


def slug(text):
    return run(
        "python3",
        "-c",
        f"import sys; sys.path.insert(0, '/app'); from textutil import slugify; print(slugify({text!r}))",
    ).stdout.strip()


MILESTONES = {
    "suite_passes": lambda: (
        run("bash", "run_tests.sh").returncode == 0
        and "hello-world" in read("tests/test_slug.py")
        and "c-est-la-vie" in read("tests/test_slug.py")
    ),
    "hidden_cases": lambda: (
        [slug(t) for t in ("Ünïcode Title", "x__y", "--edge--", "Mixed CASE 42")]
        == ["n-code-title", "x-y", "edge", "mixed-case-42"]
    ),
    "legacy_untouched": lambda: (
        slug("C'est la vie!") == "c-est-la-vie"
        and "hello_world" in read("tests_legacy/test_old.py")
        and (APP / "tests_legacy/test_old.py").is_file()
    ),
}

finish(MILESTONES)
