"""Regenerate every student notebook in notebooks/ from its source in solutions/.

    python -m grading.release [ID ...]
"""
import sys

from .course import assignments, nbgrader


def release(ids=None, root=None):
    kw = {} if root is None else {"root": root}
    for aid in ids or assignments(**kw):
        print(f"releasing {aid}", flush=True)
        nbgrader("generate_assignment", aid, "--force", "--log-level=WARN", **kw)


if __name__ == "__main__":
    release(sys.argv[1:])
