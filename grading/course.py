"""Where the course's pieces live, and how to run nbgrader on them."""
import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent  # the checkout (in an installed copy: site-packages, no course)
SOURCE = REPO / "solutions"
RELEASE = REPO / "notebooks"
WORK = REPO / "work"
CONFIG_DIR = Path(__file__).resolve().parent   # nbgrader_config.py, in the checkout and in an installed copy

# nbgrader's Gradebook shells out to `alembic`, which lives beside this interpreter.
_BIN = os.path.dirname(sys.executable)
if _BIN not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = os.pathsep.join([_BIN, os.environ.get("PATH", "")])


class NoCourse(SystemExit):
    """No course folder where one was looked for (a clear message, no traceback)."""


def is_course(folder):
    """Does `folder` hold a course: solutions/<id>/<id>.ipynb for at least one id?"""
    src = Path(folder) / "solutions"
    return src.is_dir() and any((d / f"{d.name}.ipynb").is_file() for d in src.iterdir() if d.is_dir())


def course_root(cwd=None):
    """The course folder: $SPECLAB_COURSE_ROOT, else the current folder or the nearest folder above it
    that holds solutions/<id>/<id>.ipynb (an installed `speclab-check` has no checkout to fall back on)."""
    named = os.environ.get("SPECLAB_COURSE_ROOT")
    if named:
        root = Path(named).expanduser().resolve()
        if not is_course(root):
            raise NoCourse(f"SPECLAB_COURSE_ROOT={named} is not a course folder: it has no "
                           "solutions/<id>/<id>.ipynb")
        return root
    here = Path(cwd or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if is_course(folder):
            return folder
    raise NoCourse(f"no course folder at {here} or above it (a course folder holds solutions/<id>/<id>.ipynb "
                   "and notebooks/): run this inside the course folder, or set SPECLAB_COURSE_ROOT=/path/to/course")


def load_config(root=None):
    """The course's nbgrader config (grading/nbgrader_config.py), with the course root `root`."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(CONFIG_DIR)).load_config()
    if root is not None:
        config.CourseDirectory.root = str(root)
    return config


def assignments(root=REPO):
    """Assignment ids, in course order: every solutions/<id>/<id>.ipynb."""
    src = Path(root) / "solutions"
    return sorted(d.name for d in src.iterdir() if (d / f"{d.name}.ipynb").is_file())


def source_notebook(aid, root=REPO):
    return Path(root) / "solutions" / aid / f"{aid}.ipynb"


def release_notebook(aid, root=REPO):
    return Path(root) / "notebooks" / aid / f"{aid}.ipynb"


def nbgrader(*args, root=REPO, check=True, capture=False, timeout=None, env=None, config_dir=CONFIG_DIR):
    """Run `nbgrader ARGS` with the course config (or the nbgrader_config.py in `config_dir`), in the course
    root `root` (`env`: more variables)."""
    env = dict(os.environ, **(env or {}), JUPYTER_CONFIG_PATH=str(config_dir), SPECLAB_COURSE_ROOT=str(root))
    cmd = [sys.executable, "-m", "nbgrader", *args]
    return subprocess.run(cmd, cwd=root, env=env, check=check, timeout=timeout,
                          capture_output=capture, text=True)


@functools.lru_cache(maxsize=1)
def _schema_version():
    """The gradebook schema version nbgrader stamps into a new gradebook: what its get_alembic_version asks
    the `alembic heads` command for (a Python start-up of its own), read here from the same migration
    scripts, in this process."""
    import nbgrader
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    alembic = Config()
    alembic.set_main_option("script_location", str(Path(nbgrader.__file__).parent / "alembic"))
    return ScriptDirectory.from_config(alembic).get_current_head()


def nbgrader_api(root=REPO, config=None, db=None, release_dir=None):
    """nbgrader's NbGraderAPI on the course `root` with the course config, in this process (no nbgrader
    start-up per command); `db` and `release_dir` point the gradebook and the release elsewhere."""
    import nbgrader.api
    from nbgrader.apps import NbGraderAPI

    nbgrader.api.get_alembic_version = _schema_version
    config = (config or load_config()).copy()
    config.CourseDirectory.root = str(root)
    if db is not None:
        config.CourseDirectory.db_url = f"sqlite:///{db}"
    if release_dir is not None:
        config.CourseDirectory.release_directory = str(release_dir)
    return NbGraderAPI(config=config)


def generate_assignment(aid, root=REPO, release_dir=None):
    """`nbgrader generate_assignment ID --force`, in this process; raises if nbgrader could not."""
    result = nbgrader_api(root, release_dir=release_dir).generate_assignment(aid, force=True, create=True)
    if not result.get("success"):
        # the cause is in nbgrader's log (its `error` is the traceback of its own "see the above traceback")
        causes = [ln.strip() for ln in (result.get("log") or "").splitlines()
                  if re.match(r"\s*[\w.]+(Error|Exception): ", ln)]
        raise RuntimeError(f"nbgrader generate_assignment {aid} failed: " + "\n".join(causes) +
                           f"\n{result.get('error') or result.get('log')}")


def scratch_course(dest, aids, root=REPO, release=None, sources=None):
    """A course folder of its own at `dest`: solutions/<id>/ for each assignment id in `aids`, copied from
    the course `root` (or, for an id in `sources` {id: notebook}, that source notebook written alone), and
    its student copy: release="copy" copies notebooks/<id>/ from `root` (where there is one); "generate"
    makes it with nbgrader's generate_assignment, in this process (which also makes dest/gradebook.db);
    None makes none. Returns `dest`."""
    dest, root = Path(dest), Path(root)
    skip = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    for aid in aids:
        if sources and aid in sources:
            import nbformat

            (dest / "solutions" / aid).mkdir(parents=True, exist_ok=True)
            nbformat.write(sources[aid], source_notebook(aid, dest))
        else:
            shutil.copytree(root / "solutions" / aid, dest / "solutions" / aid, ignore=skip, dirs_exist_ok=True)
        if release == "copy" and (root / "notebooks" / aid).is_dir():
            shutil.copytree(root / "notebooks" / aid, dest / "notebooks" / aid, ignore=skip, dirs_exist_ok=True)
        elif release == "generate":
            generate_assignment(aid, root=dest)
    return dest
