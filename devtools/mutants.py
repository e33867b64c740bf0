"""Run a source notebook's graded tests against other implementations of one exercise.

This is how the grader's strength is itself tested: every wrong answer in
devtools/catalog/ must fail at least one graded test cell that reads its function,
every correct variant must pass all of them, and every delegating answer (one that hands
the work to a course helper) must be flagged by the integrity scan and, once sanitized,
fail (run_sanitized).

The source notebook is executed once, in-process, with the instructor's solutions
(cells run in order in one namespace, as a kernel would): its solution and test cells and the
course cells they read from (graded_slice), not its demonstrations, which the tests never read
(notebook 10's load SmolLM2 and time it: 26 CPU s of the catalog's 27 before). For each variant,
a copy of that namespace gets the variant's definition and then re-runs the graded test
cells that read the function by name (tests_naming: not those that only mention it in a string or
lend a stand-in for it, where no variant of it can change what they find).
"""
import builtins
import contextlib
import copy
import io
import math
import os
import re
from functools import lru_cache

import nbformat
import numpy

from grading.cells import graded_cells, grade_id, is_solution
from grading.course import source_notebook


def exercises(nb):
    """{function name: source of the solution cell that defines it} for the notebook's exercises."""
    return {name: c.source for c in nb.cells if is_solution(c) for name in re.findall(r"^def (\w+)", c.source, re.M)}


def _speclab_functions():
    """{name: [functions of that name defined in a speclab module]}."""
    import importlib
    import inspect
    import pkgutil

    import speclab

    out = {}
    for info in sorted(pkgutil.walk_packages(speclab.__path__, "speclab."), key=lambda i: i.name):
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                out.setdefault(name, []).append(obj)
    return out


def twins(aid):
    """{exercise: its twin in speclab, or None} for one notebook.

    An exercise's twin is the speclab function of its name (the integrity scan flags a student's
    import of it as "the course's reference"); where several modules define one, the one whose
    parameters are the exercise's.
    """
    import ast
    import inspect

    nb = nbformat.read(source_notebook(aid), as_version=4)
    found = _speclab_functions()
    out = {}
    for name, src in exercises(nb).items():
        candidates = found.get(name, [])
        if len(candidates) > 1:
            tree = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == name)
            params = [a.arg for a in tree.args.args]
            candidates = [f for f in candidates if list(inspect.signature(f).parameters) == params]
        if len(candidates) > 1:
            raise LookupError(f"{aid}: {name} has several speclab twins: {[f.__module__ for f in candidates]}")
        out[name] = candidates[0] if candidates else None
    return out


def tests_naming(nb, func):
    """The graded test cells whose code reads `func` by its name.

    A word in a string or a comment does not count, nor a keyword that lends a stand-in of that name
    (`alone(globals(), step_time=hw.step_time)`, a `_lend` entry): in such a cell the exercise is the
    course's, so no variant of it can change what the cell finds (06's Diagnose names five exercises it
    refuses; running it for their ~60 variants cost 15 CPU s a run)."""
    return [c for c in graded_cells(nb) if func in names_read(c.source)]


def names_read(src):
    """Every bare name in a cell's code (ast.Name: not attributes, keywords, strings or comments)."""
    import ast

    return {n.id for n in ast.walk(ast.parse(strip_magics(src))) if isinstance(n, ast.Name)}


def strip_magics(src):
    return "\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("%", "!")))


def graded_slice(nb, reads=frozenset()):
    """Indices of the code cells the graded tests need: every solution and test cell, and, going up, the last
    course cell above each that binds a name it reads (grading/judge/slicing.py's backward slice, seeded with the
    solution cells too, whose bodies read the notebook's imports); and for each name in `reads` (what a variant
    reads, which a student's kernel holds: a course helper the solutions never call), the last course cell that
    binds it. A solution or test cell on the way up is passed over: names() counts what a function binds inside
    its body (08's next_counts(ids, ...)), not only globals."""
    from grading.judge.slicing import is_test, names

    cells = [(i, c, *names(c.source)) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    seeds = {i for i, c, _, _ in cells if is_test(c) or is_solution(c)}
    chosen = set(seeds)
    todo = [(i, r) for i, _, _, r in cells if i in seeds] + [(len(nb.cells), reads)]
    while todo:
        at, needed = todo.pop()
        for name in needed:
            for i, _, defined, needs in reversed([x for x in cells if x[0] < at]):
                if i in seeds or not (name in defined or "*" in defined):
                    continue
                if i not in chosen:
                    chosen.add(i)
                    todo.append((i, needs))
                break
    return frozenset(chosen)


@lru_cache(maxsize=None)
def _source(aid):
    return nbformat.read(source_notebook(aid), as_version=4)


@lru_cache(maxsize=None)
def _executed(aid, keep=None):
    """(nb, namespace) of aid's source run in-process: every code cell, or those whose indices are in `keep`."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = source_notebook(aid)
    nb = nbformat.read(path, as_version=4)
    ns = {"__name__": "__main__"}
    cwd = os.getcwd()
    os.chdir(path.parent)  # a kernel runs in the notebook's folder
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            for i, cell in enumerate(nb.cells):
                if cell.cell_type == "code" and (keep is None or i in keep):
                    exec(compile(strip_magics(cell.source), f"<{aid} {cell.id}>", "exec"), ns)
                    plt.close("all")
    finally:
        os.chdir(cwd)
    return nb, ns


def run_variant(aid, func, source):
    """Define `source` over the solved notebook and run the tests that read `func` (tests_naming).

    Returns a list of (grade_id, error) for the test cells that failed; [] means all passed.
    """
    from grading.judge.slicing import names

    defined, read = names(source)
    # what the variant binds itself (an import under another name) is not looked for above it: 10's `loop` is
    # also a demonstration's variable, which pulled in every timing cell (16 CPU s for one entry)
    nb, base = _executed(aid, graded_slice(_source(aid), frozenset(read - defined)))
    cells = tests_naming(nb, func)
    if not cells:
        raise LookupError(f"{aid}: no graded test cell names {func!r}")
    ns = dict(base)
    failures = []
    with _restored(numpy, builtins, math):  # a variant that patches a module must not leak into the next
        exec(compile(source, f"<variant of {func}>", "exec"), ns)
        for cell in cells:
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(cell.source, f"<{grade_id(cell)}>", "exec"), ns)
            except Exception as err:  # a crash is as much a failed test as an assert
                failures.append((grade_id(cell), f"{type(err).__name__}: {err}"))
    return failures


@contextlib.contextmanager
def _restored(*modules):
    saved = [(m, dict(vars(m))) for m in modules]
    try:
        yield
    finally:
        for m, attrs in saved:
            for name in set(vars(m)) - set(attrs):
                delattr(m, name)
            for name, value in attrs.items():
                if vars(m).get(name, attrs) is not value:
                    setattr(m, name, value)


def variant_cell(nb, aid, func):
    """The index of the solution cell that defines `func`."""
    word = re.compile(rf"^def {re.escape(func)}\b", re.M)
    cells = [i for i, c in enumerate(nb.cells)
             if is_solution(c) and word.search(c.source)]
    if len(cells) != 1:
        raise LookupError(f"{aid}: expected one solution cell defining {func}, found {len(cells)}")
    return cells[0]


def with_variant(aid, func, source):
    """The solved source notebook with the solution cell that defines `func` replaced by `source`."""
    nb = nbformat.read(source_notebook(aid), as_version=4)
    nb.cells[variant_cell(nb, aid, func)].source = source
    return nb


def run_sanitized(aid, func, source):
    """Grade a variant as `make grade` does: scan, sanitize, then run the tests that read `func`.

    The integrity scan reads the variant's cell against the source notebook (its allow-list of
    course helpers, its tampering rules); every flagged statement is replaced by `pass`, and the
    rest runs as run_variant runs it. Returns (the findings in the variant's cell, the failures).
    """
    from grading import integrity

    source_nb = nbformat.read(source_notebook(aid), as_version=4)
    nb = nbformat.from_dict(copy.deepcopy(source_nb))
    i = variant_cell(nb, aid, func)
    nb.cells[i].source = source
    findings = [f for f in integrity.scan(nb, source_nb) if f.cell == i]
    clean = integrity.sanitize(nb, findings)
    return findings, run_variant(aid, func, clean.cells[i].source)


def failing_in_kernel(nb, folder, timeout=60):
    """Execute nb in a real kernel (cwd = folder); return the grade_ids of graded cells that raised.

    Use this instead of run_variant for code that tampers with the interpreter itself
    (builtins, numpy): it must not run inside the test process.
    """
    from grading.kernels.execute import notebook_client

    notebook_client(nb, folder, timeout=timeout, allow_errors=True).execute()
    return {grade_id(c) for c in graded_cells(nb)
            if any(o.get("output_type") == "error" for o in c.get("outputs", []))}
