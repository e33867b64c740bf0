"""Regenerate every student notebook in notebooks/ from its source in solutions/.

    python -m grading.release [ID ...]

nbgrader's generate_assignment runs in this process (grading.course.generate_assignment): one
start-up for every notebook, not one nbgrader process per notebook.
"""
import sys

from .course import REPO, assignments, generate_assignment


def release(ids=None, root=None):
    root = REPO if root is None else root
    for aid in ids or assignments(root):
        print(f"releasing {aid}", flush=True)
        generate_assignment(aid, root=root)


if __name__ == "__main__":
    try:
        release(sys.argv[1:])
    except RuntimeError as e:  # the cause first (a misplaced `reveal` tag, say), not nbgrader's traceback
        sys.exit(f"make release: {str(e).splitlines()[0]}")
