"""Inside the judge's box (grading/judge/box.py): execute one notebook with JudgeExecute, write it back with a verdict.

`python -m grading.judge.inbox FOLDER` reads FOLDER/job.json and FOLDER/in.ipynb, and writes FOLDER/out.ipynb and
FOLDER/verdict.json (ok, or the error; the watchdog's notes; CPU seconds). A fresh process per submission pays
its imports each time: nbgrader's package imports its server extensions, and its preprocessors' package its
gradebook (SQLAlchemy), neither of which executing a notebook needs, so both packages are entered without
their __init__ and their names resolved on use (`shallow`); jsonschema's format checks are left out. Measured
here: 3.1 to 3.7 CPU s of imports without this, 0.8 to 0.9 with it.
"""
import importlib
import importlib.util
import os
import re
import sys
import types


def shallow(name, placeholders=()):
    """Enter package `name` without running its __init__: a name it re-exports (`from .x import Y`) is imported
    from its submodule when first used; a name in `placeholders` (a preprocessor the box never runs) is an empty
    subclass of NbGraderPreprocessor."""
    spec = importlib.util.find_spec(name)
    with open(spec.origin) as f:
        found = {n: m for m, n in re.findall(r"^from (\.?[\w.]+) import (\w+)$", f.read(), re.M)}
    module = types.ModuleType(name)
    module.__path__, module.__spec__, module.__file__ = list(spec.submodule_search_locations), spec, spec.origin

    def resolve(attr):
        if attr in placeholders:
            return type(attr, (resolve("NbGraderPreprocessor"),), {})
        if attr in found:
            return getattr(importlib.import_module(found[attr], name), attr)
        raise AttributeError(f"module {name!r} has no attribute {attr!r}")

    module.__getattr__ = resolve
    sys.modules[name] = module


def lean_imports():
    sys.modules["rfc3987_syntax"] = None  # jsonschema's IRI format check: a grammar built at import, seconds
    # jsonschema's other optional format checks (arrow through isoduration, ...): about 0.1 s of imports; a
    # notebook's schema names no format, and jsonschema skips a format whose checker could not be imported
    for name in ("isoduration", "rfc3986_validator", "rfc3339_validator", "webcolors", "uri_template", "fqdn"):
        sys.modules[name] = None
    shallow("nbgrader")
    shallow("nbgrader.preprocessors", placeholders=("SaveAutoGrades",))  # grades are saved in the worker
    shallow("grading.grade")
    shallow("nbconvert")  # its exporters, filters and templates (mistune, bleach, bs4): the box converts nothing
    shallow("nbconvert.preprocessors")  # the Execute step's base only, not the sanitizer or the LaTeX helpers
    shallow("nbconvert.exporters")  # nbgrader's Execute reads one name of exporter.py; the rest load jinja2


def progress(folder, index):
    with open(folder / "progress", "a") as f:
        f.write(f"{index}\n")


def main(folder):
    import json
    import resource
    import tempfile
    from pathlib import Path

    import nbformat
    from traitlets.config import Config

    from ..kernels import kernelwait, sandbox, timeline, watchdog
    from ..kernels.timeline import mark
    from .execute import JudgeExecute

    mark("judge imports")
    kernelwait.install()
    folder = Path(folder)
    verdict = {"ok": False}
    try:
        job = json.loads((folder / "job.json").read_text())
        config = Config()
        config.SandboxedKernelManager.update(job["kernel"])
        config.SandboxedKernelManager.folder = tempfile.mkdtemp(prefix="k", dir="/tmp")
        config.SandboxedKernelManager.prebuilt = job.get("prebuilt") or {}
        # "immediate": the kernel is killed once the last cell ran, not asked to shut down and waited for (0.3 s
        # a submission, measured by devtools/timeline.py): nothing of it outlives this box, which is discarded
        settings = {**job["settings"], "sandbox": True, "pid_file": "", "source": job["source"],
                    "shutdown_kernel": "immediate"}
        step = JudgeExecute(config=config, **settings)
        if job.get("progress"):  # the worker prints make check's line for each cell named here
            step.on_cell_start = lambda cell=None, cell_index=None, **_: progress(folder, cell_index)
        nb = nbformat.read(folder / "in.ipynb", as_version=4)
        resources = {"nbgrader": {"assignment": job["assignment"], "notebook": job["notebook"]},
                     "metadata": {"path": tempfile.mkdtemp(prefix="w", dir="/tmp")}}
        nb, _ = step.preprocess(nb, resources)
        mark("executed, kernel down")
        nbformat.write(nb, folder / "out.ipynb")
        # the box is reaped inside its own process namespace: its time never reaches the worker's getrusage
        used = sandbox.KERNEL_CPU[0] + sum(r.ru_utime + r.ru_stime for r in (
            resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))
        mark("verdict")
        verdict = {"ok": True, "uid": os.getuid(), "events": [list(e) for e in watchdog.EVENTS], "paused": watchdog.paused(0),
                   "cpu": used, "marks": timeline.MARKS}
    except BaseException as e:  # said in the verdict; the worker fails this notebook with it
        verdict = {"ok": False, "error": f"{type(e).__name__}: {e}"[:500]}
        raise
    finally:
        (folder / "verdict.json").write_text(json.dumps(verdict))


if __name__ == "__main__":
    from ..kernels.timeline import mark

    mark("box python up")
    lean_imports()
    try:
        main(sys.argv[1])
    except BaseException:
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    # Everything this box wrote is closed: skip the interpreter's teardown (its modules, ZeroMQ's contexts), which
    # the worker would wait for before it reads the verdict
    os._exit(0)
