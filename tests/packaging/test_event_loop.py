"""The test suite's one rule about event loops, which xdist's scheduling otherwise breaks at random.

A sync Playwright keeps an asyncio loop running on the main thread until it stops, and the browser
tests keep theirs for the whole session. In that thread a second `sync_playwright` call refuses to
start, and so does `asyncio.run`. xdist decides which tests share a worker, so a test that does either
passes alone and fails in a full run beside the browser tests: CI at stop 33 (the hub test), then a
one-process run of the suite (8 tests that used `asyncio.run`). So every test borrows the session's
`playwright`, and runs coroutines through `run_coroutine` (tests/conftest.py), which uses a thread of
its own."""
import re

from grading.course import REPO

SHARED = REPO / "tests" / "conftest.py"
FORBIDDEN = {r"\b(sync|async)_playwright\s*\(": "take the `playwright` fixture",
             r"\basyncio\.run\s*\(|\.run_until_complete\s*\(": "take the `run_coroutine` fixture"}


def uses(pattern):
    return [f"{path.relative_to(REPO)}:{n}"
            for path in sorted((REPO / "tests").rglob("*.py")) if path != SHARED
            for n, line in enumerate(path.read_text().splitlines(), 1)
            if re.search(pattern, line) and not line.lstrip().startswith("#")]


def test_no_test_starts_its_own_playwright_or_event_loop_on_the_main_thread():
    found = {advice: where for pattern, advice in FORBIDDEN.items() if (where := uses(pattern))}
    assert not found, f"these would fail beside the browser tests: {found}"


def test_the_shared_fixtures_exist():
    text = SHARED.read_text()
    assert "def playwright():" in text and "def run_coroutine():" in text
