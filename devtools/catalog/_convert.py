"""Rewrite a catalog module's entries that restate the reference solution with a few lines changed
as edit(old, new) of it (devtools/catalog/__init__.py), so that the diff is the mistake.

    python -m devtools.catalog._convert 03 04     # rewrite devtools/catalog/nb03.py and nb04.py
    python -m devtools.catalog._convert --dry 09  # only count what would change

An entry is rewritten only where the edit gives back its code: the edited reference has the
entry's syntax tree, docstrings aside, once the entry's local names are read as the reference's
where the two line up (in_reference_names; a renaming that would merge two names or hide a global
is not made). An entry that needs more lines (old and new) than it keeps, or more than MAX_HUNKS
separate edits, stays a whole source: it is a rewrite, not a one-line slip. A change that most of
one function's edits share is how its entries were written (say int(...) around a sample), not
their mistake: it is left out (_without_house_style), so such an entry becomes the reference with
its mistake alone, a different code; run tests/grading/test_grader_strength.py on the notebook after it.
"""
import ast
import difflib
import importlib
import io
import re
import sys
import tokenize
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


def _one_statement_a_line(lines):
    """The lines with `a; b` written as two lines at the same indentation (the reference's style)."""
    out = []
    for line in lines:
        body = line.strip()
        try:
            stmts = ast.parse(body).body if ";" in body else []
        except SyntaxError:
            stmts = []
        if len(stmts) > 1 and all(s.lineno == s.end_lineno == 1 for s in stmts):
            out += [_indent(line) + ast.get_source_segment(body, s) for s in stmts]
        else:
            out.append(line)
    return out


def _locals(source):
    """The names a source's functions bind (parameters, assignments, loop and `as` targets)."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
    return out


def _canonical(source, names):
    """The syntax tree with the given names replaced by v0, v1, ... in order of appearance."""
    order = {}

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in names:
                node.id = order.setdefault(node.id, f"v{len(order)}")
            return node

        def visit_arg(self, node):
            if node.arg in names:
                node.arg = order.setdefault(node.arg, f"v{len(order)}")
            return node
    return ast.dump(Rename().visit(ast.parse(source)))


_WORD = re.compile(r"[A-Za-z_]\w*|\S")


def in_reference_names(ref, source):
    """source with its local names renamed to the reference's where the two line up (same code but for the
    names), or source itself where nothing lines up or a renaming would clash."""
    try:
        mine, theirs = _locals(source), _locals(ref)
    except SyntaxError:
        return source
    r = [ln for ln in ref.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    e = [ln for ln in _one_statement_a_line(source.splitlines()) if ln.strip() and not ln.strip().startswith("#")]
    shape = lambda line, names: tuple("§" if w in names else w for w in _WORD.findall(line))  # noqa: E731
    sm = difflib.SequenceMatcher(None, [shape(x, theirs) for x in r], [shape(x, mine) for x in e], autojunk=False)
    votes = {}
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "equal":
            continue
        for x, y in zip(r[i1:i2], e[j1:j2]):
            for a, b in zip(_WORD.findall(x), _WORD.findall(y)):
                if a in theirs and b in mine:
                    votes.setdefault(b, {}).setdefault(a, 0)
                    votes[b][a] += 1
    rename = {b: max(v, key=v.get) for b, v in votes.items()}
    rename = {b: a for b, a in rename.items() if a != b}
    if not rename:
        return source
    final = [rename.get(n, n) for n in mine]
    used = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)} - mine
    if len(set(final)) != len(final) or set(rename.values()) & used:
        return source  # two names would become one, or a local would hide a global
    out, depth, prev = [], 0, None
    toks = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for k, tok in enumerate(toks):
        string = tok.string
        if tok.type == tokenize.OP and string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and string in ")]}":
            depth -= 1
        nxt = toks[k + 1].string if k + 1 < len(toks) else ""
        if (tok.type == tokenize.NAME and string in rename and not (prev == ".")
                and not (depth > 0 and nxt == "=")):
            tok = tok._replace(string=rename[string])
        out.append(tok)
        prev = string
    renamed = tokenize.untokenize(out)
    try:
        same = _canonical(renamed, set(final)) == _canonical(source, mine)
    except SyntaxError:
        same = False
    return renamed if same else source


def as_edit(ref, source):
    """An Edit of ref that gives back source's code, or None where the entry is better left whole."""
    source = in_reference_names(ref, source)
    want = _tree(source)
    if want is None:
        return None
    r, e = ref.splitlines(), _one_statement_a_line(source.strip("\n").splitlines())
    rc, ec = _code(r, _docstring_lines(ref)), _code(e)
    sm = difflib.SequenceMatcher(None, [r[i].rstrip() for i in rc], [e[j].rstrip() for j in ec], autojunk=False)
    hunks = [op for op in sm.get_opcodes() if op[0] != "equal"]
    if not hunks or len(hunks) > MAX_HUNKS:
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
    body_kept = sum(i2 - i1 for tag, i1, i2, _, _ in sm.get_opcodes() if tag == "equal") - 1  # the def line aside
    if sum(len(_block(old)) + len(_block(new)) for old, new in changes) > body_kept:
        return None  # the edit says more than the lines it keeps: a rewrite, better read whole
    try:
        return result if _tree(apply(ref, result)) == want else None
    except ValueError:
        return None


def _free(source):
    """The names a source reads and binds nowhere (scopes ignored: a coarse test, enough to catch a lost binding)."""
    bound, read = set(), set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return read - bound


def _without_house_style(found, ref):
    """The edits without the changes most of them share: those are how the entries were written (the
    catalog's house style, say int(...) around a sample), not their mistakes. An entry left with no
    change of its own is dropped (it stays whole). A shared change that another line of the entry
    leans on (say a helper renamed in its def line and used in the changed return) stays: without
    it the entry would read a name nothing binds."""
    counts = {}
    for _, change_set, _ in found:
        for change in set(change_set.changes):
            counts[change] = counts.get(change, 0) + 1
    common = {c for c, n in counts.items() if n >= 2 and 2 * n >= len(found)}
    out = []
    for node, change_set, source in found:
        own = Edit(tuple(c for c in change_set.changes if c not in common))
        if own.changes and _free(apply(ref, own)) - _free(source) - _free(ref):
            own = change_set
        if own.changes:
            out.append((node, own))
    return out


def _literal(text):
    if "\n" not in text:
        return '"' + text + '"' if '"' not in text and "\\" not in text else repr(text)
    if "'''" in text or "\\" in text:
        return repr(text)
    return "'''\n" + text + "\n'''"


def render(change_set, column):
    parts = [f"{_literal(old)}, {_literal(new)}" for old, new in change_set.changes]
    text = f"edit({parts[0]})" if len(parts) == 1 else "edit(" + ", ".join(f"({p})" for p in parts) + ")"
    if column + len(text.split("\n")[0]) <= 110:
        return text
    pad = "\n" + " " * (column + 4)
    if len(parts) == 1:
        old, new = change_set.changes[0]
        return f"edit({pad}{_literal(old)},{pad}{_literal(new)})"
    return "edit(" + ",".join(f"{pad}({p})" for p in parts) + ")"


def _chars(line, byte_offset):
    """ast's column (a UTF-8 byte offset) as a character offset."""
    return len(line.encode()[:byte_offset].decode())


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
        found = []
        for kinds_value in kinds.values:
            for value in kinds_value.values:
                node = value.elts[0] if isinstance(value, ast.Tuple) else value
                if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                    continue  # already an edit, or built by a helper of the module
                change_set = as_edit(ref, node.value)
                if change_set is None:
                    whole += 1
                else:
                    found.append((node, change_set, node.value))
        kept = _without_house_style(found, ref)
        for node, change_set in kept:
            start = offsets[node.lineno - 1] + _chars(lines[node.lineno - 1], node.col_offset)
            end = offsets[node.end_lineno - 1] + _chars(lines[node.end_lineno - 1], node.end_col_offset)
            spans.append((start, end, render(change_set, len(lines[node.lineno - 1]) - len(lines[node.lineno - 1].lstrip()))))
        whole += len(found) - len(kept)
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    if spans and not re.search(r"^from devtools.catalog import .*\bedit\b", text, re.M):
        if re.search(r"^from devtools.catalog import ", text, re.M):
            text = re.sub(r"^from devtools.catalog import (.*)$", lambda m: "from devtools.catalog import " + ", ".join(
                sorted(m.group(1).split(", ") + ["edit"])), text, count=1, flags=re.M)
        else:
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
