"""nbgrader configuration for running the course from the repository as it is.

The Makefile points JUPYTER_CONFIG_PATH at this folder, so every nbgrader command
and the formgrader find this file. Run by hand as:
    JUPYTER_CONFIG_PATH=grading nbgrader autograde 01_branch_prediction
"""
import os

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import ClearHiddenTests, GetGrades

from grading import kernelwait

c = get_config()  # noqa: F821 (injected by traitlets)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

c.CourseDirectory.root = os.environ.get("SPECLAB_COURSE_ROOT", REPO)
c.CourseDirectory.course_id = "speclab"
c.CourseDirectory.source_directory = "solutions"   # instructor notebooks: solutions + hidden tests
c.CourseDirectory.release_directory = "notebooks"  # generated student notebooks (committed)
c.CourseDirectory.solution_directory = "worked_solutions"  # not "solution": too close to solutions/

# Waits for the kernel re-poll in slices: a lost ZeroMQ wake-up costs a quarter of a second, not the
# cell's time limit (grading/kernelwait.py). This config is loaded by every nbgrader command, the
# formgrader and Validate in JupyterLab's server.
kernelwait.install()

# A student's runaway cell is interrupted after this many seconds; the rest is still graded.
c.Execute.timeout = 60
# Minimal tracebacks: a failing hidden assert shows its message, never its source line.
c.Execute.extra_arguments = ["--InteractiveShell.xmode=Minimal"]
# A deleted or de-tagged test cell is put back from the gradebook and graded.
c.OverwriteCells.add_missing_cells = True

# Feedback shows scores and failure messages but not the hidden tests themselves.
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]

# grades.csv (`nbgrader export`, and `make grade`) gets a `review` column: why a person should look
# at a submission, from autograded/grading-report.csv (grading/grade/report.py).
c.ExportApp.plugin_class = "grading.grade.report.ReviewExportPlugin"
