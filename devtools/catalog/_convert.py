"""Rewrite a catalog module's entries that restate the reference solution with a few lines changed
as edit(old, new) of it (devtools/catalog/__init__.py), so that the diff is the mistake.

    python -m devtools.catalog._convert 03 04     # rewrite devtools/catalog/nb03.py and nb04.py
    python -m devtools.catalog._convert --dry 09  # only count what would change

An entry is rewritten only when the edit gives back the same code: the syntax tree of the edited
reference equals the entry's (docstrings aside), so every verdict stays as it was. An entry that
changes more of its code than it keeps, or that needs more than MAX_HUNKS separate edits, stays a
whole source: it is a rewrite, not a one-line slip.
"""
import ast
import difflib
import importlib
import sys
from pathlib import Path

from devtools.catalog import Edit, _block, _indent, apply, reference

MAX_HUNKS = 3
HERE = Path(__file__).parent


def _tree(source):
    """The source's syntax tree without docstrings, as text (None if it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def _docstring_lines(source):
    out = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)):
            out |= set(range(body[0].lineno - 1, body[0].end_lineno))
    return out


def _code(lines, skip=()):
    return [i for i, line in enumerate(lines) if i not in skip and line.strip() and not line.strip().startswith("#")]


def _dedented(lines, pad):
    return "\n".join(line[len(pad):] if line.startswith(pad) else line.lstrip() for line in lines)


def as_edit(ref, source):
    """An Edit of ref that gives back source's code, or None where the entry is better left whole."""
    want = _tree(source)
    if want is None:
        return None
    r, e = ref.splitlines(), source.strip("\n").splitlines()
    rc, ec = _code(r, _docstring_lines(ref)), _code(e)
    sm = difflib.SequenceMatcher(None, [r[i].rstrip() for i in rc], [e[j].rstrip() for j in ec], autojunk=False)
    hunks = [op for op in sm.get_opcodes() if op[0] != "equal"]
    kept = sum(i2 - i1 for tag, i1, i2, _, _ in sm.get_opcodes() if tag == "equal")
    if not hunks or len(hunks) > MAX_HUNKS or kept < len(ec) - kept:
        return None
    changes = []
    for _, i1, i2, j1, j2 in hunks:
        for context in range(4):
            a, b = max(i1 - context, 0), min(i2 + context, len(rc))
            c, d = max(j1 - context, 0), min(j2 + context, len(ec))
            if a == b:  # a pure insertion: anchor it on a neighbouring line
                a, b, c, d = (a, b + 1, c, d + 1) if b < len(rc) else (a - 1, b, c - 1, d)
            old = r[rc[a]:rc[b - 1] + 1]
            new = e[ec[c]:ec[d - 1] + 1] if c < d else []
            pad = min((_indent(line) for line in old if line.strip()), key=len)
            change = (_dedented(old, pad), _dedented(new, pad))
            trial = Edit((change,))
            try:
                got = apply(ref, trial).splitlines()
            except ValueError:
                continue
            if got[rc[a]:rc[a] + len(new)] == new and _block(change[1]) == [ln[len(pad):] if ln.startswith(pad)
                                                                           else ln for ln in new]:
                changes.append(change)
                break
        else:
            return None
    result = Edit(tuple(changes))
    try:
        return result if _tree(apply(ref, result)) == want else None
    except ValueError:
        return None


def _literal(text):
    if "\n" not in text:
        return '"' + text + '"' if '"' not in text and "\\" not in text else repr(text)
    if "'''" in text or "\\" in text:
        return repr(text)
    return "'''\n" + text + "\n'''"


def render(change_set):
    parts = [f"{_literal(old)}, {_literal(new)}" for old, new in change_set.changes]
    if len(parts) == 1:
        return f"edit({parts[0]})"
    return "edit(" + ", ".join(f"({p})" for p in parts) + ")"


def convert(module_name, write=True):
    """(entries rewritten as edits, entries left whole) for one catalog module."""
    mod = importlib.import_module(f"devtools.catalog.{module_name}")
    path = HERE / f"{module_name}.py"
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    tree = ast.parse(text)
    catalog = next(n.value for n in tree.body if isinstance(n, ast.Assign)
                   and any(getattr(t, "id", None) == "CATALOG" for t in n.targets))
    spans, whole = [], 0
    for fkey, kinds in zip(catalog.keys, catalog.values):
        func = fkey.value
        ref = reference(mod.AID, func)
        for kinds_value in kinds.values:
            for value in kinds_value.values:
                node = value.elts[0] if isinstance(value, ast.Tuple) else value
                if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                    continue  # already an edit
                change_set = as_edit(ref, node.value)
                if change_set is None:
                    whole += 1
                    continue
                start = offsets[node.lineno - 1] + len(lines[node.lineno - 1].encode()[:node.col_offset].decode())
                end = offsets[node.end_lineno - 1] + len(lines[node.end_lineno - 1].encode()[:node.end_col_offset].decode())
                spans.append((start, end, render(change_set)))
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    if spans and "import edit" not in text:
        first = text.index("\n", text.index('"""', 3)) + 1  # after the module docstring
        text = text[:first] + "from devtools.catalog import edit\n\n" + text[first:]
    if write:
        path.write_text(text)
    return len(spans), whole


if __name__ == "__main__":
    args = sys.argv[1:]
    dry = "--dry" in args
    for n in [a for a in args if a != "--dry"]:
        done, left = convert(f"nb{n.zfill(2)}", write=not dry)
        print(f"nb{n.zfill(2)}: {done} entries written as edits, {left} left whole")
