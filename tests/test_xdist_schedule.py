"""devtools/xdist_schedule.py: a worker that dies mid-run costs the test it died in, not the whole run.

With xdist 3.8.0's own loadgroup scheduler each run below never ends (measured: killed at 60 s)."""
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

TESTS = textwrap.dedent("""
    import os
    import pytest

    def test_first():
        pass

    def test_crash():
        os._exit(1)  # as a worker aborted in CI: no report, the process gone

    @pytest.mark.xdist_group("g")
    def test_group_before():
        pass

    @pytest.mark.xdist_group("g")
    def test_group_crash():
        os.abort()

    @pytest.mark.xdist_group("g")
    def test_group_after():
        pass

    def test_last():
        pass
""")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_crashed_worker_costs_one_test(tmp_path, workers):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not the course's settings
    (tmp_path / "test_crashes.py").write_text(TESTS)
    try:
        run = subprocess.run([sys.executable, "-m", "pytest", "-n", str(workers), "--dist", "loadgroup",
                              "-p", "devtools.xdist_schedule", "-p", "no:cacheprovider", "-q", "-rf"],
                             cwd=tmp_path, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
                             capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the run did not end after its workers crashed (xdist's loadgroup deadlock)")
    out = run.stdout + run.stderr
    assert "2 failed, 4 passed" in out, out[-2000:]
    assert "FAILED test_crashes.py::test_crash " in out and "FAILED test_crashes.py::test_group_crash " in out, out[-2000:]
