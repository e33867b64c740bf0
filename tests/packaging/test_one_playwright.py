"""Every test that drives a browser borrows the session's one Playwright (tests/conftest.py).

A sync Playwright keeps an asyncio loop running on its thread until it stops, and a second
`sync_playwright` call in that process refuses to start. xdist decides which tests share a worker, so a
test that starts its own passes alone and fails in the full run (CI, stop 33: the hub test, run on
the worker where the browser tests' Playwright was alive)."""
import re

from grading.course import REPO

SHARED = REPO / "tests" / "conftest.py"


def test_only_the_shared_fixture_starts_playwright():
    starts = [f"{path.relative_to(REPO)}:{n}"
              for path in sorted((REPO / "tests").rglob("*.py")) if path != SHARED
              for n, line in enumerate(path.read_text().splitlines(), 1)
              if re.search(r"\b(sync|async)_playwright\s*\(", line)]
    assert not starts, f"these start their own Playwright; take the `playwright` fixture instead: {starts}"
    assert re.search(r"def playwright\(\):", SHARED.read_text()), "tests/conftest.py lost its `playwright` fixture"
