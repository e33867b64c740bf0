"""Generate submissions, good and broken, for testing and timing the grading of a class.

Every submission is built from the course's own notebooks at run time (the student copy
in notebooks/, the instructor's solutions in solutions/, the catalogued mistakes in
devtools/catalog/): nothing is a hand-copied fixture, so the suite follows the notebooks
as they change.

    CASES                       the broken submissions, each with the score it deserves
                                (the hostile ones: devtools/attacks.py's ATTACKS, built the same way)
    write_class(root, aid, ...) put a whole class into <root>/submitted/
    bench_class(root, aid, n)   a class of n realistic submissions (right, partly wrong, blank)

A case's `build(root, aid)` returns {file name: bytes} for the student's folder
submitted/<student>/<aid>/; its `expect(root, aid)` returns the (score, max_score) a
fair grader gives it, from the points of the tests the breakage touches.
"""
import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import nbformat

from . import catalog, coursework
from grading.cells import grade_id, graded_points as graded, is_graded, is_solution, points
from grading.course import release_notebook, scratch_course, source_notebook

# The exercise whose cell the runtime cases break: in 01, mistake_share (the Diagnose), which no other
# exercise's test or demonstration calls, so it costs no other exercise its points; its own test and one
# demonstration cell call it, so a loop there costs two cell timeouts (drift, called by three cells, cost
# three: a third of the class's grading went to the two looping cases). A notebook not named here breaks
# the exercise with the fewest test points.
BREAK_IN = {"01_branch_prediction": "mistake_share"}


# ----------------------------------------------------------------------------- notebooks

def student_copy(root, aid):
    return nbformat.read(release_notebook(aid, root), as_version=4)


def solved(root, aid):
    """The student copy with every solution cell filled in from the instructor's source."""
    return coursework.solved(aid, root)


def full_marks(root, aid):
    total = sum(graded(nbformat.read(source_notebook(aid, root), as_version=4)).values())
    return total, total


def defines(cell, func):
    return cell.cell_type == "code" and re.search(rf"^def {re.escape(func)}\b", cell.source, re.M) is not None


def solution_cell(nb, func):
    cells = [c for c in nb.cells if is_solution(c) and defines(c, func)]
    assert len(cells) == 1, f"exactly one solution cell must define {func}"
    return cells[0]


def tests_naming(root, aid, func):
    """{grade_id: points} of the graded cells whose (full, hidden included) source names func."""
    word = re.compile(rf"\b{re.escape(func)}\b")
    source = nbformat.read(source_notebook(aid, root), as_version=4)
    return {grade_id(c): points(c) for c in source.cells if is_graded(c) and word.search(c.source)}


def break_in(root, aid):
    func = BREAK_IN.get(aid)
    source = nbformat.read(source_notebook(aid, root), as_version=4)
    defined = [f for c in source.cells if is_solution(c) for f in re.findall(r"^def (\w+)\(", c.source, re.M)]
    if func not in defined:
        # any other notebook (or one whose named exercise is gone): the exercise with the fewest test points
        funcs = [f for f in catalog.load().get(aid, {}) if f in defined] or defined
        func = min(funcs, key=lambda f: sum(tests_naming(root, aid, f).values()))
    return func


def failing_tests(root, aid, func, source):
    """{grade_id: points} of the graded tests that fail when `func` is defined by `source`, found the
    way tests/grading/test_grader_strength.py finds them (devtools.mutants.run_variant, on the repository's
    source notebook, which every temporary course here copies)."""
    from .mutants import run_variant

    failed = {gid for gid, _ in run_variant(aid, func, source)}
    points = graded(nbformat.read(source_notebook(aid, root), as_version=4))
    return {gid: points[gid] for gid in failed}


def losing(func):
    """expect(): full marks less the tests that fail when func never returns (loops or is undefined)."""
    def expect(root, aid):
        name = func or break_in(root, aid)
        never = f"def {name}(*args, **kwargs):\n    raise RuntimeError('this exercise never returns')\n"
        score, total = full_marks(root, aid)
        return score - sum(failing_tests(root, aid, name, never).values()), total
    return expect


def nb_bytes(nb):
    return nbformat.writes(nb).encode()


def broken_notebook(root, aid, body, before=""):
    """The solved notebook with the break-in exercise's function body replaced by `body`."""
    nb = solved(root, aid)
    func = break_in(root, aid)
    cell = solution_cell(nb, func)
    signature = re.search(rf"^def {func}\(.*?\):", cell.source, re.M).group(0)
    cell.source = before + signature + "\n" + "\n".join("    " + line for line in body.splitlines())
    return nb


def broken_function(root, aid, body, before=""):
    """broken_notebook's files."""
    return {f"{aid}.ipynb": nb_bytes(broken_notebook(root, aid, body, before))}


# ----------------------------------------------------------------------------- the cases

@dataclass
class Case:
    name: str            # the student id it is submitted under
    what: str            # what the submission does, in words
    build: Callable      # (root, aid) -> {file name: bytes}
    expect: Callable     # (root, aid) -> (score, max_score)
    note: str            # a phrase the grading note for this student must contain
    flagged: bool        # must the instructor review it?


def _loop_forever(root, aid):
    return broken_function(root, aid, "while True:\n    pass")


def _catch_everything(root, aid):
    # swallows the KeyboardInterrupt the grader sends at the timeout, so the cell never ends. It waits
    # rather than spins (a retry-forever loop): the grader sees the same cell, and the test run keeps the
    # core that three timeouts and their restarts would otherwise burn (about 50 CPU-s); loops_forever spins.
    return broken_function(root, aid, "import time\nwhile True:\n    try:\n        while True:\n"
                                      "            time.sleep(0.05)\n    except BaseException:\n        pass")


def _import_error(root, aid):
    return broken_function(root, aid, "return None", before="import speclab_helpers_of_my_own\n\n")


def _print_50mb(root, aid):
    nb = solved(root, aid)
    cell = nbformat.v4.new_code_cell('print("x" * 25_000_000)\nprint(("y" * 99 + "\\n") * 250_000)')
    nb.cells.insert(len(nb.cells) // 2, cell)  # 25 MB on one line, 25 MB over 250,000 lines
    return {f"{aid}.ipynb": nb_bytes(nb)}


def _eat_memory(root, aid):
    # 256 MiB at a time, written to (so it is really used), until the allocation fails: without a limit it
    # takes the machine's memory and the kernel, or another process, is killed by the kernel's OOM killer
    return broken_function(root, aid, "hoard = []\nwhile True:\n    hoard.append(b'x' * 2**28)")


def _hoard_memory(root, aid):
    nb = solved(root, aid)
    cell = nbformat.v4.new_code_cell("table = []  # a lookup table of every context, built one block at a time\n"
                                     "while True:\n    table.append(b'x' * 2**28)")
    nb.cells.insert(len(nb.cells) // 2, cell)  # a global: the memory stays held after the MemoryError
    return {f"{aid}.ipynb": nb_bytes(nb)}


def _first_test(nb):
    return next(c for c in nb.cells if is_graded(c))


def _deleted_test(root, aid):
    nb = solved(root, aid)
    nb.cells.remove(_first_test(nb))
    return {f"{aid}.ipynb": nb_bytes(nb)}


def _locked_edited(root, aid):
    nb = solved(root, aid)
    cell = _first_test(nb)
    cell.source = "# I trust my code\npass"
    cell.metadata.nbgrader["points"] = 100
    return {f"{aid}.ipynb": nb_bytes(nb)}


def _test_made_solution(root, aid):
    """A test cell turned into a solution cell with its points raised (and its asserts removed)."""
    nb = solved(root, aid)
    cell = _first_test(nb)
    cell.source = "pass  # my own test"
    cell.metadata.nbgrader.update(solution=True, locked=False, points=100)
    return {f"{aid}.ipynb": nb_bytes(nb)}


def _metadata_removed(root, aid):
    nb = solved(root, aid)
    cell = _first_test(nb)
    del cell.metadata["nbgrader"]
    cell.source = "pass"
    return {f"{aid}.ipynb": nb_bytes(nb)}


def _bad_json(root, aid):
    text = nb_bytes(solved(root, aid)).decode()
    i = text.index('"source"', len(text) // 2)
    return {f"{aid}.ipynb": (text[:i] + text[i + 1:]).encode()}  # a cell with a stray quote gone


def _not_a_notebook(root, aid):
    return {f"{aid}.ipynb": json.dumps({"cells": "my answers are below", "nbformat": 4}).encode()}


def _truncated(root, aid):
    data = nb_bytes(solved(root, aid))
    return {f"{aid}.ipynb": data[: len(data) // 3]}  # the upload was cut off


def _wrong_name(root, aid):
    return {f"{aid}-Copy1.ipynb": nb_bytes(solved(root, aid))}


def _vandal(root, aid):
    # Relative paths from the kernel's folder, autograded/<student>/<aid>/, reach the course root.
    body = ('import os, shutil, glob\n'
            'up = os.path.join("..", "..", "..")\n'
            'for name in ("gradebook.db", "grades.csv"):\n'
            '    if os.path.exists(os.path.join(up, name)):\n'
            '        os.remove(os.path.join(up, name))\n'
            'with open(os.path.join(up, "i_was_here.txt"), "w") as f:\n'
            '    f.write("hello")\n'
            'for nb in glob.glob(os.path.join(up, "solutions", "*", "*.ipynb")):\n'
            '    open(nb, "w").write("{}")\n'
            'shutil.rmtree(os.path.join(up, "submitted"), ignore_errors=True)\n'
            'root = os.environ.get("SPECLAB_COURSE_ROOT")\n'
            'if root:\n'
            '    open(os.path.join(root, "i_was_here_too.txt"), "w").write("hello")\n')
    nb = solved(root, aid)
    cell = solution_cell(nb, break_in(root, aid))
    cell.source = body + "\n" + cell.source
    return {f"{aid}.ipynb": nb_bytes(nb)}


def _older_release(root, aid):
    """A copy released from an earlier version of the source: a test renamed, points and text changed."""
    source = nbformat.read(source_notebook(aid, root), as_version=4)
    tests = [c for c in source.cells if is_graded(c)]
    tests[0].metadata.nbgrader["grade_id"] += "_v1"         # a test cell renamed since
    tests[-1].metadata.nbgrader["points"] += 1                # points changed since
    tests[-1].source = "# an earlier version of this test\n" + tests[-1].source
    first_md = next(c for c in source.cells if c.cell_type == "markdown")
    first_md.source += "\n\n(Release 0.9: due Friday.)"
    with tempfile.TemporaryDirectory() as tmp:
        nb = coursework.solved(aid, scratch_course(tmp, [aid], release="generate", sources={aid: source}))
    nb.nbformat_minor = 4  # saved by an older Jupyter: no cell ids
    for cell in nb.cells:
        cell.pop("id", None)
    return {f"{aid}.ipynb": json.dumps(nb, indent=1).encode()}


CASES = [
    Case("loops_forever", "an exercise that loops forever", _loop_forever, losing(None),
         "ran longer than", False),
    Case("catches_interrupt", "a loop that catches BaseException, so it cannot be interrupted",
         _catch_everything, losing(None), "ran longer than", False),
    Case("import_error", "an exercise cell that imports a module that does not exist",
         _import_error, losing(None), "ModuleNotFoundError", False),
    Case("prints_50mb", "a cell that prints 50 MB", _print_50mb, full_marks, "output", False),
    Case("eats_memory", "an exercise that allocates memory without end (far more than the machine has)",
         _eat_memory, losing(None), "ran out of memory", False),
    Case("hoards_memory", "a cell that fills a global list until memory runs out, and keeps it",
         _hoard_memory, full_marks, "ran out of memory", False),
    Case("deleted_test", "a test cell deleted", _deleted_test, full_marks, "missing", True),
    Case("edited_locked", "a locked test cell edited (asserts removed, points raised)",
         _locked_edited, full_marks, "edited", True),
    Case("test_made_solution", "a test cell turned into a solution cell, its points raised and its asserts removed",
         _test_made_solution, full_marks, "nbgrader type changed", True),
    Case("metadata_removed", "a test cell's nbgrader metadata removed (and its asserts)",
         _metadata_removed, full_marks, "missing", True),
    Case("bad_json", "a cell that is not valid JSON", _bad_json,
         lambda root, aid: (0, full_marks(root, aid)[1]), "could not be read", True),
    Case("not_a_notebook", "valid JSON that is not a notebook", _not_a_notebook,
         lambda root, aid: (0, full_marks(root, aid)[1]), "could not be read", True),
    Case("truncated", "a notebook file cut off half-way", _truncated,
         lambda root, aid: (0, full_marks(root, aid)[1]), "could not be read", True),
    Case("wrong_name", "the notebook saved under another file name", _wrong_name, full_marks,
         "-Copy1.ipynb", True),
    Case("vandal", "a solution that deletes and writes files outside its folder (the sandbox's read-only system "
         "stops it with an OSError in the exercise's cell, whose tests then fail)", _vandal,
         losing(None), "outside its working folder", True),
    Case("older_release", "a notebook from an older release of the assignment", _older_release,
         full_marks, "release", True),
]


# ----------------------------------------------------------------------------- classes

def wrong_answer(root, aid, index=0, func=None):
    """The solved notebook with one catalogued mistake (of `func`, if given):
    (files, function, description, its source)."""
    rows = [(f, d, s) for f, kinds in catalog.load()[aid].items() for d, s in kinds["wrong"].items()
            if func is None or f == func]
    func, desc, src = rows[index % len(rows)]
    nb = solved(root, aid)
    solution_cell(nb, func).source = src
    return {f"{aid}.ipynb": nb_bytes(nb)}, func, desc, src


def good_students(root, aid):
    """{student: files} of a small honest class: right, blank, and mistakes in two different exercises."""
    funcs = list(catalog.load()[aid])
    return {"reference": {f"{aid}.ipynb": nb_bytes(solved(root, aid))},
            "blank": {f"{aid}.ipynb": nb_bytes(student_copy(root, aid))},
            "wrong_a": wrong_answer(root, aid, 0, funcs[0])[0],
            "wrong_b": wrong_answer(root, aid, 0, funcs[1 % len(funcs)])[0]}


def bench_class(root, aid, n):
    """{student: files} of n submissions: 60% right, 30% with one catalogued mistake, 10% blank."""
    right, blank = nb_bytes(solved(root, aid)), nb_bytes(student_copy(root, aid))
    out = {}
    for i in range(n):
        if i % 10 == 9:
            files = {f"{aid}.ipynb": blank}
        elif i % 10 >= 6:
            files = wrong_answer(root, aid, i)[0]
        else:
            files = {f"{aid}.ipynb": right}
        out[f"student{i:03d}"] = files
    return out


def write_class(root, aid, students):
    """Write {student: {file name: bytes}} into <root>/submitted/<student>/<aid>/."""
    for student, files in students.items():
        folder = Path(root) / "submitted" / student / aid
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for name, data in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)  # a package shipped beside the notebook
            (folder / name).write_bytes(data)


def bad_class(root, aid, cases=CASES):
    return {case.name: case.build(root, aid) for case in cases}
