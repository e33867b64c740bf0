"""The catalog of answers the grader must judge correctly, one module per notebook.

Each module defines
    AID = "<assignment id>"
    CATALOG = {
        "<function name>": {
            "wrong": {"<the mistake, in words>": edit("<old lines>", "<new lines>"), ...},
                      # or "<source defining the function>" (a rewrite, not an edit of the reference);
                      # either may be paired with "<fragment of the message the student must read>"
            "right": {"<the variant, in words>": edit(...) or "<source defining the function>", ...},
            "delegate": {"<what it hands over, in words>": edit(...) or "<source defining the function>", ...},
                      # or ("<source>", "<fragment of the integrity finding the student must read>")
        },
        ...
    }
tests/grading/test_grader_strength.py runs every entry: each wrong answer must fail a graded
test that names the function, and each right one must pass them all. Each delegate answer
hands the exercise's work to a course helper that is not on its allow-list (the solution
cell's `# Helpers you may call:` line in the source notebook): imported under another name,
reached through a module attribute, a class or a method, or a helper of another notebook.
It must pass every graded test as written (so it shows a real hole), be flagged by the
integrity scan, and fail a graded test once the scan has removed the flagged lines
(devtools.mutants.run_sanitized), which is what `make grade` and `make check` do.

An entry that differs from the reference solution in a few lines is written as an edit of it,
`edit(old, new)` (or `edit((old, new), (old2, new2), ...)`), so the diff is the mistake: the
reference is the solution cell of the source notebook that defines the function, without its
`### BEGIN/END SOLUTION` lines. `old` is one or more whole lines of it, written without their
indentation, that must stand there exactly once; `new` replaces them at their indentation (its
own relative indentation kept; "" deletes them). Where several mistakes share a form other than
the reference's (a formula written out where the reference calls a helper, say), that form is
written once in the module and the entries edit it instead: `edit(old, new, base=_FORM)`.
load() hands every entry out as a source.
"""
import importlib
import pkgutil
import textwrap
from dataclasses import dataclass
from functools import lru_cache

# A submission that breaks numpy's comparisons before answering wrongly. The graded tests compare
# with speclab.plumbing.checks (plain Python), so the wrong answer after it must still fail. This patches
# the real numpy module, as a student's cell would; devtools.mutants.run_variant puts numpy back
# after each variant, and tests/grading/test_integrity.py runs the same attack in a real kernel.
NUMPY_ATTACK = """
import numpy as np
np.isclose = np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
"""


@dataclass(frozen=True)
class Edit:
    """A variant written as the reference solution (or `base`, a source) with some of its lines replaced:
    ((old, new), ...)."""
    changes: tuple
    base: str | None = None


def edit(*changes, base=None):
    """edit(old, new), or edit((old, new), (old2, new2), ...), optionally base=SOURCE: see the module's docstring."""
    if len(changes) == 2 and all(isinstance(c, str) for c in changes):
        changes = (changes,)
    if not changes or not all(isinstance(c, tuple) and len(c) == 2 for c in changes):
        raise TypeError("edit(old, new) or edit((old, new), ...)")
    return Edit(tuple(changes), base)


def _block(text):
    return textwrap.dedent(text).strip("\n").splitlines() if text.strip() else []


def _indent(line):
    return line[:len(line) - len(line.lstrip())]


def apply(reference, variant):
    """The source of `variant` (an Edit, or a source as it is) over the reference solution's source (or the
    edit's own base)."""
    if not isinstance(variant, Edit):
        return variant
    lines = (reference if variant.base is None else variant.base.strip("\n")).splitlines()
    for old, new in variant.changes:
        want = _block(old)
        if not want:
            raise ValueError("an edit's old text is empty")
        hits = [i for i in range(len(lines) - len(want) + 1)
                if textwrap.dedent("\n".join(lines[i:i + len(want)])).splitlines() == want]
        if len(hits) != 1:
            raise ValueError(f"an edit's old text must stand exactly once in the reference; "
                             f"{old.strip()!r} stands {len(hits)} times")
        at = hits[0]
        pad = min((_indent(line) for line in lines[at:at + len(want)] if line.strip()), key=len)
        lines[at:at + len(want)] = [pad + line if line.strip() else line for line in _block(new)]
    return "\n".join(lines) + "\n"


def reference(aid, func):
    """The reference solution of `func` in notebook `aid`: its solution cell, without the solution markers."""
    from devtools.mutants import variant_cell

    nb = _source(aid)
    src = nb.cells[variant_cell(nb, aid, func)].source
    return "\n".join(line for line in src.splitlines()
                     if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")) + "\n"


@lru_cache(maxsize=None)
def _source(aid):
    import nbformat

    from grading.course import source_notebook
    return nbformat.read(source_notebook(aid), as_version=4)


def _resolved(aid, func, value):
    source, message = split(value)
    if isinstance(source, Edit):
        source = apply(reference(aid, func), source)
    return source if message is None else (source, message)


@lru_cache(maxsize=None)
def _load():
    out = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        out[mod.AID] = {func: {kind: {desc: _resolved(mod.AID, func, v) for desc, v in entries.items()}
                               for kind, entries in kinds.items()}
                        for func, kinds in mod.CATALOG.items()}
    return out


def load():
    """{aid: CATALOG} for every catalog module, each edit applied to its reference (a fresh copy each call)."""
    return {aid: {func: {kind: dict(e) for kind, e in kinds.items()} for func, kinds in cat.items()}
            for aid, cat in _load().items()}


def split(value):
    """(source, expected message fragment or None) of one catalog value."""
    return value if isinstance(value, tuple) else (value, None)


def entries():
    """(aid, func, kind, description, source, message) for every catalog entry, in a stable order."""
    rows = []
    for aid, catalog in sorted(load().items()):
        for func, kinds in catalog.items():
            for kind in ("wrong", "right", "delegate"):
                for desc, value in kinds.get(kind, {}).items():
                    rows.append((aid, func, kind, desc, *split(value)))
    return rows
