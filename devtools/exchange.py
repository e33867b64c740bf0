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
has the full set-up). Here one process plays every part, with nbgrader's exchange classes run
through NbGraderAPI (the code each command runs, without a Python start-up per command):
`instructor` with the course's config in the course folder, `student` with the config a student's
server has (written to <home>/.jupyter/nbgrader_config.py and read back from there), its own
submission cache in its home, and an explicit student id, since every part runs as the same OS user.
"""
import os
from pathlib import Path

from grading.course import load_config, nbgrader_api

COURSE_ID = "speclab"
STEPS = {"release_assignment": "ReleaseAssignment", "collect": "Collect", "release_feedback": "ReleaseFeedback",
         "list": "List", "fetch_assignment": "FetchAssignment", "submit": "Submit", "fetch_feedback": "FetchFeedback"}


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


def _run(api, step, aid):
    """`nbgrader STEP AID` with NbGraderAPI's settings: the list of assignments for "list"; otherwise
    raises if nbgrader could not, else returns {"success": True, "log": ...}."""
    from nbgrader.utils import capture_log, temp_attrs

    with temp_attrs(api.coursedir, assignment_id=aid):
        app = getattr(api.exchange, STEPS[step])(coursedir=api.coursedir, authenticator=api.authenticator, parent=api)
        if step == "list":
            return app.start()
        result = capture_log(app)
    if not result.get("success"):
        raise RuntimeError(f"nbgrader {step} {aid} failed:\n{result.get('error') or result.get('log')}")
    return result


def instructor(root, exchange, step, aid):
    """`nbgrader STEP AID` as the instructor, in the course folder `root`, against this exchange."""
    config = load_config(root)
    config.Exchange.root = str(exchange)
    return _run(nbgrader_api(root, config), step, aid)


def student(home, name, exchange, step, aid=""):
    """`nbgrader STEP AID` as student `name` in the home folder `home` (its assignments in <home>/<aid>/)."""
    from traitlets.config.loader import PyFileConfigLoader

    home = Path(home)
    folder = home / ".jupyter"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text(student_config(exchange))
    config = PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()
    config.CourseDirectory.student_id = name
    config.Exchange.assignment_dir = str(home)
    config.Exchange.cache = str(home / ".local" / "share" / "jupyter" / "nbgrader_cache")
    return _run(nbgrader_api(home, config), step, aid)
