"""The speclab a graded kernel sees: the course's package without the graded notebook's own reference answers.

speclab holds the reference implementation of every exercise (the function of the exercise's name; later
notebooks import earlier ones', and the judge runs the hidden tests against them in its own process). A
kernel grading notebook N that could reach N's references could hand them in as its answers, by routes
no scan of the source can follow (a module name built from strings, `open` on the file, an attribute walk
from another module). So the sandbox binds, at /course/speclab, a copy of speclab in which the functions
named by N's exercises raise instead of answering: the code is not in the kernel's file system at all.

The copy is made once per (speclab's sources, set of names) and kept in a cache folder; building it reads and
rewrites speclab's ~40 files (milliseconds: README's "hidden references").
"""
import ast
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

MESSAGE = "the course's reference for {name} is not available while {notebook} is graded"


def exercise_names(nb):
    """The functions a notebook's exercises define: those of its solution cells (as the source has them)."""
    names = set()
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("solution"):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        names.update(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return sorted(names)


def stubbed(source, names, notebook):
    """`source` (a module's text) with the bodies of the functions in `names` (at any depth) replaced by a raise;
    every other line, and so every line number, unchanged."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in names]
    for node in sorted(defs, key=lambda n: n.body[0].lineno, reverse=True):
        first, last = node.body[0], node.body[-1]
        if first.lineno == node.lineno:  # `def f(): return x` on one line
            return None
        indent = " " * first.col_offset
        msg = MESSAGE.format(name=node.name, notebook=notebook)
        # NotImplementedError (a RuntimeError): an unsolved exercise's own error, so a demo that falls back on
        # the course's function (speclab.plumbing.pending.learner_first) prints needs' one line, not a traceback
        stub = f"{indent}raise NotImplementedError({msg!r})\n"
        blank = ["\n"] * (last.end_lineno - first.lineno)
        lines[first.lineno - 1:last.end_lineno] = [stub, *blank]
    return "".join(lines)


def _sources(package):
    return sorted(p for p in Path(package).rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def key(package, names, notebook):
    h = hashlib.sha256(repr((sorted(names), notebook)).encode())
    for path in _sources(package):
        if path.suffix == ".py":
            h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
        else:
            st = path.stat()
            h.update(f"{path.relative_to(package)}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return h.hexdigest()[:20]


def cache_root():
    return Path(os.environ.get("SPECLAB_HIDDEN_CACHE") or Path(tempfile.gettempdir()) / f"speclab-hidden-{os.getuid()}")


def package_without(package, names, notebook):
    """A folder holding speclab as `package` has it, less the functions in `names` (made once, then reused)."""
    if not names:
        return Path(package)
    root = cache_root()
    root.mkdir(mode=0o755, parents=True, exist_ok=True)
    done = root / key(package, names, notebook) / "speclab"
    if done.is_dir():
        return done
    work = Path(tempfile.mkdtemp(prefix="build-", dir=root))
    try:
        copy = work / "speclab"
        shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
        for path in copy.rglob("*.py"):
            text = path.read_text()
            if not any(name in text for name in names):
                continue
            out = stubbed(text, set(names), notebook)
            if out is None:
                raise RuntimeError(f"{path.name}: a reference of {notebook} is defined on one line; cannot hide it")
            path.write_text(out)
        os.chmod(work, 0o755)
        try:
            os.rename(work, done.parent)
        except OSError:  # another worker made it first
            shutil.rmtree(work, ignore_errors=True)
        return done
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
