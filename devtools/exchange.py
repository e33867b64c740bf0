"""nbgrader's exchange: the route a course on JupyterHub takes from release to feedback.

    instructor: nbgrader release_assignment ID      -> <exchange>/speclab/outbound/ID/
    student:    nbgrader fetch_assignment ID         -> ~/ID/ID.ipynb
    student:    nbgrader submit ID                   -> <exchange>/speclab/inbound/<student>+ID+<time>/
    instructor: nbgrader collect ID                  -> submitted/<student>/ID/ (+ timestamp.txt)
    instructor: make grade  (python -m grading.grade ID)
    instructor: nbgrader release_feedback ID         -> <exchange>/speclab/feedback/<hash>.html
    student:    nbgrader fetch_feedback ID           -> ~/ID/feedback/<time>/ID.html

On a hub every user runs these as themselves, in their own home, with a global nbgrader
config that names the course and the exchange (student_config below; grading/README.md
has the full set-up). Here one process plays every part: `instructor` runs in the course
folder with the course's config, `student` in a home folder of its own, with its own
Jupyter data folder (nbgrader's submission cache), a config holding only what a student's
server has, and an explicit --student, since every part runs as the same OS user.
"""
import os
import subprocess
import sys
from pathlib import Path

from grading.course import nbgrader

COURSE_ID = "speclab"


def student_config(exchange):
    """The nbgrader config a student's server needs (on a hub: /etc/jupyter/nbgrader_config.py)."""
    return (f"c = get_config()\n"
            f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
            f"c.Exchange.root = {str(exchange)!r}\n")


def make_exchange(exchange):
    """The exchange folder: it must exist, and be writable by every student (on a hub: mode 1777... or 777)."""
    exchange = Path(exchange)
    exchange.mkdir(parents=True, exist_ok=True)
    os.chmod(exchange, 0o777)
    return exchange


def instructor(root, exchange, *args, check=True):
    """Run `nbgrader ARGS` as the instructor, in the course folder, against this exchange."""
    return nbgrader(*args, f"--Exchange.root={exchange}", "--log-level=WARN", root=root, check=check,
                    capture=True)


def student(home, name, exchange, *args, check=True, log_level="WARN"):
    """Run `nbgrader ARGS` as student `name` in the home folder `home`."""
    home = Path(home)
    config = home / ".jupyter"
    config.mkdir(parents=True, exist_ok=True)
    (config / "nbgrader_config.py").write_text(student_config(exchange))
    env = {k: v for k, v in os.environ.items() if k not in ("SPECLAB_COURSE_ROOT",)}
    env.update(HOME=str(home), JUPYTER_CONFIG_PATH=str(config), JUPYTER_CONFIG_DIR=str(config),
               JUPYTER_DATA_DIR=str(home / ".local" / "share" / "jupyter"))
    cmd = [sys.executable, "-m", "nbgrader", *args, f"--student={name}", f"--log-level={log_level}"]
    return subprocess.run(cmd, cwd=home, env=env, check=check, capture_output=True, text=True)
