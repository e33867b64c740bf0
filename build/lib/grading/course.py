"""Where the course's pieces live, and how to run nbgrader on them."""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "solutions"
RELEASE = REPO / "notebooks"
WORK = REPO / "work"
CONFIG_DIR = REPO / "grading"

# nbgrader's Gradebook shells out to `alembic`, which lives beside this interpreter.
_BIN = os.path.dirname(sys.executable)
if _BIN not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = os.pathsep.join([_BIN, os.environ.get("PATH", "")])


def assignments(root=REPO):
    """Assignment ids, in course order: every solutions/<id>/<id>.ipynb."""
    src = Path(root) / "solutions"
    return sorted(d.name for d in src.iterdir() if (d / f"{d.name}.ipynb").is_file())


def source_notebook(aid, root=REPO):
    return Path(root) / "solutions" / aid / f"{aid}.ipynb"


def release_notebook(aid, root=REPO):
    return Path(root) / "notebooks" / aid / f"{aid}.ipynb"


def nbgrader(*args, root=REPO, check=True, capture=False, timeout=None):
    """Run `nbgrader ARGS` with the course config, in the course root `root`."""
    env = dict(os.environ, JUPYTER_CONFIG_PATH=str(CONFIG_DIR), SPECLAB_COURSE_ROOT=str(root))
    cmd = [sys.executable, "-m", "nbgrader", *args]
    return subprocess.run(cmd, cwd=root, env=env, check=check, timeout=timeout,
                          capture_output=capture, text=True)
