"""Per notebook: time to execute the source and the student copy headless (wall seconds, kernel start
included), and `nbgrader autograde` time per submission with the course's config, so with its sandboxed steps
(one process grading 3 submissions, its start-up included)."""
import shutil
import tempfile
import time
from pathlib import Path

import nbformat

from grading.course import REPO, assignments, generate_assignment, nbgrader, source_notebook
from grading.kernels.execute import execute


def bench():
    for aid in assignments():
        for copy, path in (("source", source_notebook(aid)), ("student copy", REPO / "notebooks" / aid / f"{aid}.ipynb")):
            _, seconds = execute(path, allow_errors=copy != "source")
            yield f"{aid}: execute {copy}", f"{seconds:6.1f} s"
    for aid in assignments():
        yield f"{aid}: autograde, per submission (3 submissions)", f"{autograde_seconds(aid, 3):6.1f} s"


def autograde_seconds(aid, n):
    """Release into a scratch course, submit the solved notebook n times, time one autograde run."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(REPO / "solutions" / aid, root / "solutions" / aid)
        generate_assignment(aid, root=root)
        nb = nbformat.read(source_notebook(aid), as_version=4)
        for i in range(n):
            folder = root / "submitted" / f"student{i}" / aid
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{aid}.ipynb")
        start = time.perf_counter()
        nbgrader("autograde", aid, "--force", "--log-level=ERROR", root=root, check=False, capture=True)
        return (time.perf_counter() - start) / n
