"""`make bench`: every benchmark section in devtools/benches/, printed as a table.

    python -m devtools.bench [SECTION ...]     # e.g. python -m devtools.bench notebooks
"""
import importlib
import pkgutil
import sys
import time

from . import benches


def sections(names=None):
    mods = [m.name for m in pkgutil.iter_modules(benches.__path__)]
    return [m for m in sorted(mods) if not names or m in names]


def print_rows(rows):
    for label, value in rows:
        print(f"  {label:<58} {value}", flush=True)


def per_notebook(table, argv):
    """Run a section's table(aids) for the notebooks named by number in argv (all if none), printed as above:
    `python -m devtools.benches.widgets 05 07`."""
    from grading.course import assignments

    print_rows(table([a for a in assignments() if not argv or any(a.startswith(x.zfill(2)) for x in argv)]))


def main(names):
    for name in sections(names):
        print(f"\n== {name} ==", flush=True)
        start = time.perf_counter()
        print_rows(importlib.import_module(f"devtools.benches.{name}").bench())
        print(f"  ({time.perf_counter() - start:.1f} s for this section)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
