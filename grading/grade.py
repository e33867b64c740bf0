"""`make grade`: autograde every submission in submitted/, write feedback and grades.csv.

Layout (nbgrader's): submitted/<student>/<assignment id>/<assignment id>.ipynb.
Each submission is graded on its own, so one broken submission never stops the class.

    python -m grading.grade            # everything in submitted/
    python -m grading.grade 04_tv_distance
"""
import sys
import tempfile
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from .course import REPO, nbgrader


def submissions(root, only=None):
    """(student, assignment) pairs found in submitted/, sorted."""
    found = []
    for folder in sorted((Path(root) / "submitted").glob("*/*")):
        if folder.is_dir() and (only is None or folder.name in only):
            found.append((folder.parent.name, folder.name))
    return found


def in_gradebook(root, aid):
    with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
        try:
            gb.find_assignment(aid)
            return True
        except MissingEntry:
            return False


def register(root, aid):
    """Record the assignment's graded cells in the gradebook without touching notebooks/."""
    with tempfile.TemporaryDirectory() as scratch:
        nbgrader("generate_assignment", aid, "--force", "--log-level=ERROR",
                 f"--CourseDirectory.release_directory={scratch}", root=root)


def grade(root=REPO, only=None):
    pairs = submissions(root, only)
    if not pairs:
        print(f"nothing to grade: put submissions in {Path(root) / 'submitted'}/<student>/<assignment>/")
        return []
    for aid in sorted({aid for _, aid in pairs}):
        if not in_gradebook(root, aid):
            register(root, aid)
    failed = []
    for i, (student, aid) in enumerate(pairs, 1):
        print(f"[{i}/{len(pairs)}] {student} {aid}", flush=True)
        run = nbgrader("autograde", aid, "--student", student, "--force", "--log-level=ERROR",
                       root=root, check=False, capture=True)
        if run.returncode != 0:
            failed.append((student, aid, (run.stderr or run.stdout).strip().splitlines()[-1:] or ["?"]))
        nbgrader("generate_feedback", aid, "--student", student, "--force", "--log-level=ERROR",
                 root=root, check=False, capture=True)
    nbgrader("export", "--to", str(Path(root) / "grades.csv"), "--log-level=ERROR", root=root)
    print(f"graded {len(pairs) - len(failed)} of {len(pairs)} submissions; "
          f"feedback in {Path(root) / 'feedback'}, scores in {Path(root) / 'grades.csv'}")
    for student, aid, why in failed:
        print(f"  could not grade {student} {aid} completely: {why[0]}")
    return failed


if __name__ == "__main__":
    grade(only=sys.argv[1:] or None)
