"""grading/grade/report.py: the progress line of make grade and speclab-check."""
import subprocess
import sys

from grading.course import REPO

# The module is imported while sys.stderr is a stream that is closed afterwards (as pytest's capsys
# does to the test that happens to import it first); a Progress made later must write to the
# sys.stderr of its own moment. Seen failing in a worker of the suite: "I/O operation on closed file".
IMPORTED_UNDER_A_CLOSED_STREAM = """
import io, sys, types
real, sys.stderr = sys.stderr, io.StringIO()
from grading.grade import report
sys.stderr.close()
sys.stderr = real
res = types.SimpleNamespace(status="graded", flagged=False, student="s1", aid="01", score=1, max_score=2)
report.Progress(1).step(res)
"""


def test_progress_writes_to_the_stderr_of_its_moment_not_of_the_import():
    run = subprocess.run([sys.executable, "-c", IMPORTED_UNDER_A_CLOSED_STREAM], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "1/1" in run.stderr and "s1 01: 1/2 ok" in run.stderr, run.stderr[-2000:]
