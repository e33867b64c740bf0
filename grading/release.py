"""Regenerate every student notebook in notebooks/ from its source in solutions/.

    python -m grading.release [ID ...]

nbgrader's generate_assignment runs in this process (grading.course.generate_assignment): one
start-up for every notebook, not one nbgrader process per notebook.

It also records, in notebooks/SOURCES.sha256 (sha256sum's format, paths from the repository root), the
source each student copy was generated from. A change to a source's hidden tests alone leaves the student
copy byte for byte as it was, so without this record nothing in notebooks/ would show that the copies were
regenerated after it; tests/notebooks/test_release_record.py fails when a source no longer matches.
"""
import hashlib
import sys
from pathlib import Path

from .course import REPO, assignments, generate_assignment, source_notebook

RECORD = "notebooks/SOURCES.sha256"


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def recorded(root=REPO):
    """{source path from the root: its sha256} as the last release recorded it."""
    path = Path(root) / RECORD
    lines = path.read_text().splitlines() if path.is_file() else []
    return {name: sha for sha, name in (line.split("  ", 1) for line in lines if line.strip())}


def record(aids, root=REPO):
    """Record the sources of `aids` (the others as they were), sorted by path."""
    root = Path(root)
    entries = recorded(root)
    for aid in aids:
        path = source_notebook(aid, root)
        entries[str(path.relative_to(root))] = digest(path)
    (root / RECORD).write_text("".join(f"{sha}  {name}\n" for name, sha in sorted(entries.items())))


def release(ids=None, root=None):
    root = Path(REPO if root is None else root)
    aids = ids or assignments(root)
    for aid in aids:
        print(f"releasing {aid}", flush=True)
        generate_assignment(aid, root=root)
    record(aids, root)


if __name__ == "__main__":
    try:
        release(sys.argv[1:])
    except RuntimeError as e:  # the cause first (a misplaced `reveal` tag, say), not nbgrader's traceback
        sys.exit(f"make release: {str(e).splitlines()[0]}")
