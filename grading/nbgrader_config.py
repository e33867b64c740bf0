"""nbgrader configuration for running the course from the repository as it is.

The Makefile points JUPYTER_CONFIG_PATH at this folder, so every nbgrader command
and the formgrader find this file. Run by hand as:
    JUPYTER_CONFIG_PATH=grading nbgrader autograde 01_branch_prediction
"""
import os

from nbgrader.converters import GenerateAssignment

from grading.kernels import kernelwait
from grading import offline, reveal, validate
from grading import nbgrader_steps as steps

c = get_config()  # noqa: F821 (injected by traitlets)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

c.CourseDirectory.root = os.environ.get("SPECLAB_COURSE_ROOT", REPO)
c.CourseDirectory.course_id = "speclab"
c.CourseDirectory.source_directory = "solutions"   # instructor notebooks: solutions + hidden tests
c.CourseDirectory.release_directory = "notebooks"  # generated student notebooks (committed)
c.CourseDirectory.solution_directory = "worked_solutions"  # not "solution": too close to solutions/

# The student copy: nbgrader's own steps, after one that puts a one-line pointer where each reveal (a
# break-it's Explain, cells tagged `reveal`) is in the source (grading/reveal.py), so `nbgrader
# generate_assignment` by hand makes the same copy as `make release`.
c.GenerateAssignment.preprocessors = [reveal.RevealPointers, *GenerateAssignment.class_traits()["preprocessors"].default()]

# Waits for the kernel re-poll in slices: a lost ZeroMQ wake-up costs a quarter of a second, not the
# cell's time limit (grading/kernels/kernelwait.py). This config is loaded by every nbgrader command, the
# formgrader and Validate in JupyterLab's server.
kernelwait.install()
# Validate shows a failure's message first, the test's source after it (grading/validate.py).
validate.install()

# A student's runaway cell is interrupted after this many seconds; the rest is still graded.
c.Execute.timeout = 60
# Minimal tracebacks: a failing hidden assert shows its message, never its source line.
c.Execute.extra_arguments = ["--InteractiveShell.xmode=Minimal"]
# A deleted or de-tagged test cell is put back from the gradebook and graded.
c.OverwriteCells.add_missing_cells = True

# Every path an instructor can grade from runs the course's sandbox, integrity scan and notes: `make grade`
# (grading/grade/run.py puts its own steps in place of these), and `nbgrader autograde` and
# `nbgrader generate_feedback` by hand or from the formgrader's Autograde and Generate Feedback buttons
# (these, grading/nbgrader_steps.py). Where the sandbox cannot start, these refuse and name `make grade`.
c.Autograde.sanitize_preprocessors = steps.SANITIZE
c.Autograde.autograde_preprocessors = steps.AUTOGRADE
# As `make grade` limits one worker's kernel: memory shared by one worker (1 to 4 GiB), CPU as its
# per-submission limit (20 cell timeouts + 2 minutes).
c.SandboxedKernelManager.memory_limit = steps.default_memory_limit()
c.SandboxedKernelManager.cpu_limit = 20 * c.Execute.timeout + 120

# make check's progress, a line per graded part as it starts (grading/selfcheck.py sets the variable).
if os.environ.get("SPECLAB_PROGRESS"):
    from functools import partial

    from grading.selfcheck import part_started

    c.Execute.on_cell_start = partial(part_started, os.environ["SPECLAB_PROGRESS"])

# Feedback shows scores and failure messages but not the hidden tests themselves (nor any output that
# shows them), sanitised, with the grading notes: `make grade`'s page.
c.GenerateFeedback.exporter_class = steps.CourseFeedback
c.GenerateFeedback.preprocessors = steps.FEEDBACK

# Offline pages: the formgrader's submission view (and every page nbconvert renders here) typesets its mathematics
# as MathML on the server and loads no MathJax from a CDN (grading/offline.py).
offline.use_offline_templates()
# nbgrader's default shows the whole config on Manage Assignments and, as it holds classes, warns "Formgrader config
# is not serializable" on every visit; it is a debugging aid, off here
c.FormgradeExtension.debug = False
c.HTMLExporter.filters = {"markdown2html": "grading.offline.markdown2html"}
# ...but not for the feedback page, whose own markdown2html (the same maths) also draws the course's reveal
c.FeedbackExporter.filters = {}

# Off a hub (`make formgrader` on one machine), the exchange is a folder of this user's, so release, fetch, submit
# and collect work here and the formgrader shows no "exchange directory does not exist" box nor logs a critical
# "Unwritable directory" line on every page. On a hub (JUPYTERHUB_USER is set) the hub's config names the shared
# one (grading/hub/setup.sh).
if not os.environ.get("JUPYTERHUB_USER"):
    from jupyter_core.paths import jupyter_data_dir

    c.Exchange.root = os.path.join(jupyter_data_dir(), "nbgrader_exchange")
    os.makedirs(c.Exchange.root, exist_ok=True)

# `nbgrader collect` records when each submission reached the exchange, from the exchange's own file times (the
# late penalty is charged from it, never from the student's timestamp.txt: grading/grade/received.py).
c.ExchangeFactory.collect = "grading.grade.received.CourseCollect"

# grades.csv (`nbgrader export`, and `make grade`) gets a `review` column: why a person should look
# at a submission, from autograded/grading-report.csv (grading/grade/report.py).
c.ExportApp.plugin_class = "grading.grade.report.ReviewExportPlugin"
