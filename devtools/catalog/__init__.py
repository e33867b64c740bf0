"""The catalog of answers the grader must judge correctly, one module per notebook.

Each module defines
    AID = "<assignment id>"
    CATALOG = {
        "<function name>": {
            "wrong": {"<the mistake, in words>": "<source defining the function>", ...},
                      # or ("<source>", "<fragment of the message the student must read>")
            "right": {"<the variant, in words>": "<source defining the function>", ...},
            "delegate": {"<what it hands over, in words>": "<source defining the function>", ...},
                      # or ("<source>", "<fragment of the integrity finding the student must read>")
        },
        ...
    }
tests/test_grader_strength.py runs every entry: each wrong answer must fail a graded
test that names the function, and each right one must pass them all. Each delegate answer
hands the exercise's work to a course helper that is not on its allow-list (the solution
cell's `# Helpers you may call:` line in the source notebook): imported under another name,
reached through a module attribute, a class or a method, or a helper of another notebook.
It must pass every graded test as written (so it shows a real hole), be flagged by the
integrity scan, and fail a graded test once the scan has removed the flagged lines
(devtools.mutants.run_sanitized), which is what `make grade` and `make check` do.
"""
import importlib
import pkgutil

# A submission that breaks numpy's comparisons before answering wrongly. The graded tests compare
# with speclab.checks (plain Python), so the wrong answer after it must still fail. This patches
# the real numpy module, as a student's cell would; devtools.mutants.run_variant puts numpy back
# after each variant, and tests/test_integrity.py runs the same attack in a real kernel.
NUMPY_ATTACK = """
import numpy as np
np.isclose = np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
"""


def load():
    """{aid: CATALOG} for every catalog module."""
    out = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        out[mod.AID] = mod.CATALOG
    return out


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
