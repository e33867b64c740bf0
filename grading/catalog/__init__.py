"""The catalog of answers the grader must judge correctly, one module per notebook.

Each module defines
    AID = "<assignment id>"
    CATALOG = {
        "<function name>": {
            "wrong": {"<the mistake, in words>": "<source defining the function>", ...},
            "right": {"<the variant, in words>": "<source defining the function>", ...},
        },
        ...
    }
tests/test_grader_strength.py runs every entry: each wrong answer must fail a graded
test that names the function, and each right one must pass them all.
"""
import importlib
import pkgutil


def load():
    """{aid: CATALOG} for every catalog module."""
    out = {}
    for info in pkgutil.iter_modules(__path__):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        out[mod.AID] = mod.CATALOG
    return out


def entries():
    """(aid, func, kind, description, source) for every catalog entry, in a stable order."""
    rows = []
    for aid, catalog in sorted(load().items()):
        for func, kinds in catalog.items():
            for kind in ("wrong", "right"):
                for desc, src in kinds.get(kind, {}).items():
                    rows.append((aid, func, kind, desc, src))
    return rows
