"""Integrity scan: find student code that tampers with what the graded tests rely on,
or that hands an exercise's work to a course helper.

Graded tests run in the student's kernel after the student's code, so a solution
cell could replace what the tests call. This scan reads every code cell that is not
the course's own (new cells and edited ones) and flags, with the cell and the line:

  - an assignment into a module or into builtins   (np.isclose = ..., builtins.abs = ...)
  - setattr / delattr / exec / eval / __import__ / globals() / sys.modules
  - a top-level rebinding of a name the tests use  (check_close = ..., del np, P = ...)
  - a use of the course's reference version of an exercise
    (from speclab.speculative import residual, or speculative.residual(...))
  - delegation: a solution cell that uses a course helper (any function, class or method
    reachable from the speclab package: under any name, through a module attribute, a
    class, a method, getattr or importlib, or a function of the student's own that uses
    one) which is not on its exercise's allow-list. The allow-list is the solution cell's
    first line in the SOURCE notebook, `# Helpers you may call: a, b` (or `none`); a cell
    without that line may call no helper. The student's own exercises are not helpers.

`sanitize` returns a copy of the notebook with each flagged statement replaced by
`pass`, so a tampering submission is graded on its own merits: whatever the
tampering was meant to hide shows up as a failed test, and a delegated exercise
loses its points.
"""
import ast
import builtins
import copy
import functools
import importlib
import inspect
import re
import symtable
import types
from dataclasses import dataclass

import nbformat

from .cells import meta as _nbgrader  # one reader of nbgrader's cell metadata (grading/cells.py)

BUILTIN_MODULES = {"builtins", "__builtins__", "sys", "importlib", "speclab"}
DANGEROUS_CALLS = {"setattr", "delattr", "exec", "eval", "compile", "__import__", "globals", "vars"}
ALLOW_LINE = re.compile(r"^[ \t]*#[ \t]*Helpers you may call:[ \t]*(.*?)[ \t]*$", re.M | re.I)
DELEGATES = "hands the work to the course helper"  # how every delegation finding begins


@dataclass(frozen=True)
class Finding:
    cell: int          # index of the cell in the notebook
    grade_id: str      # the solution cell's id, or "" for a cell the student added
    line: int          # line number inside the cell
    code: str          # that line
    why: str
    kind: str = "tamper"  # "tamper", or "delegate": the work handed to a course helper

    def __str__(self):
        where = f"cell {self.cell}" + (f" ({self.grade_id})" if self.grade_id else " (added by the student)")
        return f"{where}, line {self.line}: {self.why}: `{self.code.strip()}`"


def course_context(source_nb):
    """What the course's own cells provide: trusted sources, protected names, exercise names."""
    trusted, protected, modules, exercises = set(), set(), set(BUILTIN_MODULES), set()
    for cell in source_nb.cells:
        if cell.cell_type != "code":
            continue
        meta = _nbgrader(cell)
        tree = _parse(cell.source)
        if meta.get("solution"):
            exercises |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))} if tree else set()
            continue
        trusted.add(cell.source.strip())
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    bound = (alias.asname or alias.name).split(".")[0]
                    modules.add(bound)
                    protected.add(bound)
        if meta.get("grade"):
            protected |= free_names(cell.source)
    protected -= exercises
    protected = {n for n in protected if not n.startswith("_")}  # test-local scratch names
    return trusted, protected, modules, exercises


def free_names(src):
    """Names a cell reads from the notebook's namespace without binding them itself."""
    top = symtable.symtable(src, "<cell>", "exec")
    names = {s.get_name() for s in top.get_symbols() if s.is_referenced() and not s.is_assigned()
             and not s.is_imported()}
    stack = list(top.get_children())
    while stack:
        table = stack.pop()
        stack.extend(table.get_children())
        if table.get_type() == "function":
            assigned = {s.get_name() for s in top.get_symbols() if s.is_assigned()}
            names |= set(table.get_globals()) - assigned
    return names


@functools.lru_cache(maxsize=4096)  # the same course cells come with every submission; trees are read, never changed
def _parse(src):
    """The cell's syntax tree, line numbers as in the cell; None if IPython could not run it either.

    A cell with IPython syntax (`%time`, `!ls`, `x?`) is parsed as IPython runs it (each magic
    becomes a get_ipython() call on its own line), so a magic cannot hide a cell from the scan.
    """
    try:
        return ast.parse(src)
    except SyntaxError:
        pass
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        tree = ast.parse(TransformerManager().transform_cell(src))
    except Exception:  # not Python, not IPython: the cell fails in the kernel too
        return None
    lines = src.splitlines()
    blank = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    ast.increment_lineno(tree, blank)  # IPython drops the leading blank lines
    return tree


def _cell_magic(src):
    """True if the cell starts with a cell magic (%%time ...): IPython runs it as one statement."""
    return src.lstrip().startswith("%%")


def _statement_lines(tree):
    """{line: the first line of the innermost statement that contains it} (decorators included)."""
    where = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            for line in range(start, (node.end_lineno or node.lineno) + 1):
                if where.get(line, 0) <= node.lineno:
                    where[line] = node.lineno
    return where


def _root(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    if isinstance(node, ast.Call):  # globals()[...] = ..., vars(np)[...] = ...
        return getattr(node.func, "id", None)
    return node.id if isinstance(node, ast.Name) else None


def _targets(stmt):
    if isinstance(stmt, ast.Assign):
        return stmt.targets
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        return [stmt.target]
    if isinstance(stmt, ast.Delete):
        return stmt.targets
    return []


def _flatten(targets):
    for t in targets:
        if isinstance(t, (ast.Tuple, ast.List)):
            yield from _flatten(t.elts)
        elif isinstance(t, ast.Starred):
            yield from _flatten([t.value])
        else:
            yield t


def _import_origins(tree):
    """{name: (module, attribute or None)} for every name a cell's imports bind."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out.setdefault(a.asname or a.name.split(".")[0], set()).add(
                    (a.name if a.asname else a.name.split(".")[0], None))
        elif isinstance(node, ast.ImportFrom) and not node.level:
            for a in node.names:
                out.setdefault(a.asname or a.name, set()).add((node.module, a.name))
    return out


def course_imports(source_nb):
    """{name: origins} of what the course's own cells import: importing the same again is harmless."""
    out = {}
    for cell in source_nb.cells:
        if cell.cell_type == "code" and not _nbgrader(cell).get("solution"):
            tree = _parse(cell.source)
            for name, origins in (_import_origins(tree) if tree else {}).items():
                out.setdefault(name, set()).update(origins)
    return out


def scan_cell(src, protected, modules, exercises, imports=None):
    """[(line, why)] for one cell's source (imports: course_imports, re-imports of which are harmless)."""
    tree = _parse(src)
    if tree is None:
        return []
    found = []
    modules = set(modules)
    for node in ast.walk(tree):  # modules the cell imports itself are modules too
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
    for node in ast.walk(tree):
        for t in _flatten(_targets(node)):
            root = _root(t)
            if isinstance(t, (ast.Attribute, ast.Subscript)) and root in modules | {"globals", "vars"}:
                verb = "deletes from" if isinstance(node, ast.Delete) else "assigns into"
                found.append((node.lineno, f"{verb} `{root}`, which the tests use"))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in DANGEROUS_CALLS:
            found.append((node.lineno, f"calls {node.func.id}(), which can change what the tests see"))
        if isinstance(node, ast.Attribute) and node.attr == "modules" and _root(node) == "sys":
            found.append((node.lineno, "touches sys.modules"))
        if isinstance(node, ast.Attribute) and node.attr in exercises and _root(node) in modules:
            found.append((node.lineno, f"uses the course's reference {node.attr} instead of writing it"))
        if isinstance(node, ast.Global):
            hit = sorted(set(node.names) & protected)
            if hit:
                found.append((node.lineno, f"declares {', '.join(hit)} global, which the tests use"))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("speclab"):
            hit = sorted({a.name for a in node.names} & exercises)
            if hit:
                found.append((node.lineno, f"imports the course's reference {', '.join(hit)} instead of writing it"))
    for stmt in tree.body:  # top-level rebinding of a name the tests rely on
        names = set()
        for t in _flatten(_targets(stmt)):
            if isinstance(t, ast.Name):
                names.add(t.id)
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
            names -= {"numpy", "np", "math"}  # re-importing the same modules is harmless
            same = _import_origins(stmt)  # ... and so is importing what the course imports, the same way
            names -= {n for n, origins in same.items() if origins <= (imports or {}).get(n, set())}
        hit = sorted(names & protected)
        if hit:
            found.append((stmt.lineno, f"rebinds {', '.join(hit)}, which the tests use"))
    at = _statement_lines(tree)  # a finding names the statement that sanitize removes
    return sorted({(at.get(line, line), why) for line, why in found})


# ---------------------------------------------------------------------------------------------
# Delegation: a solution cell may use only the course helpers its exercise allows.
#
# A "course helper" is any callable reachable from the speclab package (a function, a class, a
# method, a callable instance). Names are resolved to the real objects by importing speclab
# here, so data (V, TOKENS, COLORS, tables) is never a helper, and a helper is recognised under
# any name: `from speclab import costs as c; c.best_k`, `f = temper`, `getattr(costs, "best_k")`,
# `importlib.import_module("speclab.costs")`, `ngram.NGram(...)(ctx)`, a function of the
# student's own (in any cell) that calls one. Bindings are collected from every cell, in any
# order (a function looks its globals up when it is called, not when it is defined).
# ---------------------------------------------------------------------------------------------


def allow_line(src):
    """The names on a cell's `# Helpers you may call:` line: a tuple (() for none); None if absent."""
    m = ALLOW_LINE.search(src)
    if m is None:
        return None
    text = m.group(1).strip().rstrip(".")
    if text.lower() in ("none", ""):
        return ()
    return tuple(e.strip() for e in text.split(",") if e.strip())


def _solution_cells(nb):
    return [(i, c) for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and _nbgrader(c).get("solution") and not _nbgrader(c).get("grade")]


def allow_lists(source_nb):
    """{grade_id: the helpers that exercise may call}, read from the source notebook's solution cells.

    A solution cell without the line may call no helper (tests/test_integrity.py names it).
    """
    return {_nbgrader(c).get("grade_id", ""): allow_line(c.source) or () for _, c in _solution_cells(source_nb)}


def missing_allow_lines(source_nb):
    """[(cell index, grade_id)] of solution cells whose first line is not `# Helpers you may call: ...`."""
    out = []
    for i, c in _solution_cells(source_nb):
        first = next((line for line in c.source.splitlines() if line.strip()), "")
        if allow_line(first) is None:
            out.append((i, _nbgrader(c).get("grade_id", "")))
    return out


def unresolved_allow_entries(source_nb):
    """[(grade_id, entry)] for allow-list entries that name no course helper the notebook binds
    (the notebook's own exercises may be listed too: they are the student's, always allowed)."""
    course = _Analysis()
    course.add_source(source_nb, solutions_as_course=True)
    out = []
    for gid, names in allow_lists(source_nb).items():
        for name in names:
            if name not in course.exercises and not any(r.kind in ("helper", "instance")
                                                        for r in course.resolve_name(name)):
                out.append((gid, name))
    return out


class _Ref:
    """What an expression may hold, as far as the scan is concerned.

    kind: "module"   a speclab module                    "helper"   a speclab callable (obj)
          "instance" an instance of speclab class obj    "value"    other data reached from speclab
          "builtin"  getattr / importlib.import_module    "pymodule" the importlib module
          "hidden"   a route the scan cannot follow (label says which)
          "carrier"  something the student made (a function, a lambda, a list ...) that may hold helpers
    """
    __slots__ = ("kind", "obj", "label", "owners", "node", "scope", "cell", "name", "everywhere")

    def __init__(self, kind, obj=None, label="", owners=(), node=None, scope=None, cell=None, name="",
                 everywhere=True):
        self.kind, self.obj, self.label, self.owners = kind, obj, label, owners
        self.node, self.scope, self.cell, self.name, self.everywhere = node, scope, cell, name, everywhere


class _Binding:
    __slots__ = ("kind", "data", "scope", "cell", "course")

    def __init__(self, kind, data, scope, cell, course):
        self.kind, self.data, self.scope, self.cell, self.course = kind, data, scope, cell, course


class _Scope:
    def __init__(self, kind, parent):
        self.kind, self.parent = kind, parent  # kind: "global", "function", "class"
        self.bindings, self.declared_global, self.stars = {}, set(), []


_MISSING = object()
_NEW_SCOPE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
              ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_HARMLESS_DUNDERS = {"__name__", "__qualname__", "__doc__", "__module__"}
_IPYTHON = ("uses IPython (a magic, a shell command or get_ipython()), which the integrity scan "
            "cannot read (write exercises in plain Python)")


def _outer_parts(node):
    """The parts of a scope-making node evaluated in the enclosing scope."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d]
    if isinstance(node, ast.Lambda):
        return node.args.defaults + [d for d in node.args.kw_defaults if d]
    if isinstance(node, ast.ClassDef):
        return node.decorator_list + node.bases + [k.value for k in node.keywords]
    return [node.generators[0].iter]


def _inner_parts(node):
    if isinstance(node, ast.Lambda):
        return [node.body]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.body
    out = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
    for i, gen in enumerate(node.generators):
        out += ([gen.iter] if i else []) + gen.ifs
    return out


def _scope_nodes(roots):
    """Every node under roots that belongs to the same scope (nested scopes: only their outer parts)."""
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        yield node
        children = _outer_parts(node) if isinstance(node, _NEW_SCOPE) else list(ast.iter_child_nodes(node))
        stack.extend(reversed(children))


def _statements(stmts):
    """The statements of a block and of the blocks inside it (if, for, with, try), not of functions."""
    for node in stmts:
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                yield from _statements(getattr(node, field, []))
            for handler in getattr(node, "handlers", []):
                yield handler
                yield from _statements(handler.body)


def _const(node):
    return node.value if isinstance(node, ast.Constant) else _MISSING


def _speclab_module(name):
    """The speclab module of that name (imported), or None for anything else."""
    if not isinstance(name, str) or not (name == "speclab" or name.startswith("speclab.")):
        return None
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def _is_speclab_name(mod):
    return isinstance(mod, str) and (mod == "speclab" or mod.startswith("speclab."))


def _qual(obj):
    mod = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(type(obj), "__qualname__", "?")
    return f"{mod}.{name}" if mod else name


def _classify(obj, label, owners=()):
    if isinstance(obj, types.ModuleType):
        if _is_speclab_name(obj.__name__):
            return _Ref("module", obj, label)
        if obj is importlib:
            return _Ref("pymodule", obj, label)
        return None  # numpy, math, ...: not followed
    if obj is getattr or obj is importlib.import_module or obj is builtins.__import__:
        return _Ref("builtin", obj, label)
    try:
        mod = getattr(obj, "__module__", None)
    except Exception:
        mod = None
    if callable(obj) and _is_speclab_name(mod):
        return _Ref("helper", obj, label, owners)
    return _Ref("value", obj, label, owners)


class _Analysis:
    """Bindings of one notebook (course cells and the student's cells) and what names can hold."""

    def __init__(self):
        self.glob = _Scope("global", None)
        self.scopes = {}          # id(scope-making node) -> its _Scope
        self.exercises = {}       # exercise function name -> its grade_id
        self._memo, self._busy, self._carried = {}, set(), {}
        self._keep = []           # the trees, so that ids stay unique

    # --- building -----------------------------------------------------------------------------
    def add_source(self, source_nb, solutions_as_course=False):
        """The course's cells of the source notebook (and, if asked, its solution cells)."""
        key = (_source_key(source_nb), solutions_as_course)
        bindings, stars, exercises = _cached(_COURSE, key, lambda: _Analysis()._course(source_nb, solutions_as_course))
        for name, bs in bindings.items():
            self.glob.bindings.setdefault(name, []).extend(bs)
        self.glob.stars += stars
        self.exercises.update(exercises)
        self._memo.clear()

    def _course(self, source_nb, solutions_as_course):
        for i, cell in enumerate(source_nb.cells):
            if cell.cell_type != "code":
                continue
            tree = _parse(cell.source)
            if _nbgrader(cell).get("solution") and not _nbgrader(cell).get("grade"):
                for node in (tree.body if tree else []):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        self.exercises[node.name] = _nbgrader(cell).get("grade_id", "")
                if not solutions_as_course:
                    continue
            if tree is not None:
                self.add_tree(tree, i, course=True)
        return self.glob.bindings, self.glob.stars, self.exercises

    def add_tree(self, tree, cell, course):
        self._keep.append(tree)
        self._memo.clear()
        if course:  # the course's own cells: only what they bind at the top level matters
            for node in _statements(tree.body):
                self._bind(node, self.glob, cell, course)
        else:
            self._build(tree.body, self.glob, cell, course)

    def _build(self, roots, scope, cell, course):
        nodes = list(_scope_nodes(roots))
        for node in nodes:
            if isinstance(node, (ast.Global, ast.Nonlocal)) and scope.kind != "global":
                scope.declared_global |= set(node.names) if isinstance(node, ast.Global) else set()
        for node in nodes:
            self._bind(node, scope, cell, course)
            if isinstance(node, _NEW_SCOPE) and not course:  # the course's own functions are never walked
                inner = _Scope("class" if isinstance(node, ast.ClassDef) else "function", scope)
                self.scopes[id(node)] = inner
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    a = node.args
                    for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
                        if arg is not None:
                            self._add(inner, arg.arg, _Binding("opaque", None, inner, cell, course))
                elif not isinstance(node, ast.ClassDef):  # a comprehension's loop variables
                    for gen in node.generators:
                        self._bind_target(gen.target, None, inner, cell, course)
                self._build(_inner_parts(node), inner, cell, course)

    def _add(self, scope, name, binding):
        if binding.scope is self.glob:
            binding.scope = None  # evaluated in the global scope of whichever analysis holds it
        if scope.kind != "global" and name in scope.declared_global:
            scope = self.glob
        scope.bindings.setdefault(name, []).append(binding)

    def _bind_target(self, target, value, scope, cell, course, kind="value"):
        if isinstance(target, ast.Name):
            b = _Binding(kind, value, scope, cell, course) if value is not None else _Binding("opaque", None, scope, cell, course)
            self._add(scope, target.id, b)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairs = (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
                     and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts))
            for j, t in enumerate(target.elts):
                self._bind_target(t, value.elts[j] if pairs else value, scope, cell, course, kind)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, value, scope, cell, course, kind)

    def _bind(self, node, scope, cell, course):
        add = lambda name, kind, data: self._add(scope, name, _Binding(kind, data, scope, cell, course))  # noqa: E731
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.asname or a.name.split(".")[0], "module", a.name if a.asname else a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if node.level:
                    add(a.asname or a.name, "opaque", None)
                elif a.name == "*":
                    self.glob.stars.append(node.module)
                else:
                    add(a.asname or a.name, "from", (node.module, a.name))
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                self._bind_target(t, node.value, scope, cell, course)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            self._bind_target(node.target, getattr(node, "value", None) if isinstance(node, ast.AnnAssign) else None,
                              scope, cell, course)
        elif isinstance(node, ast.NamedExpr):
            self._bind_target(node.target, node.value, scope, cell, course)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self._bind_target(node.target, node.iter, scope, cell, course, kind="iter")
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self._bind_target(item.optional_vars, item.context_expr, scope, cell, course, kind="iter")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            add(node.name, "opaque", None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name, "def", node)

    # --- resolving ----------------------------------------------------------------------------
    def lookup(self, name, scope):
        s, first = scope, True
        while s is not None and s.kind != "global":
            if name in s.declared_global:
                break
            if (s.kind != "class" or first) and name in s.bindings:
                return s.bindings[name]
            s, first = s.parent, False
        if name in self.exercises:
            return []  # the student's own exercise: never a helper (a rebinding is flagged where it happens)
        found = list(self.glob.bindings.get(name, []))
        found += [_Binding("from", (mod, name), None, None, True) for mod in self.glob.stars]
        if not found and name in ("getattr", "__import__", "get_ipython"):
            found = [_Binding("builtin", name, None, None, True)]
        return found

    def resolve_name(self, text):
        """What a dotted name (as an allow-list writes it) holds in the notebook's global scope."""
        try:
            node = ast.parse(text, mode="eval").body
        except SyntaxError:
            return []
        self._keep.append(node)
        return self.resolve(node, self.glob)

    def resolve(self, node, scope):
        key = (id(node), id(scope))
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return []
        self._busy.add(key)
        try:
            out = self._resolve(node, scope)
        finally:
            self._busy.discard(key)
        self._memo[key] = out
        return out

    def _resolve(self, node, scope):
        if isinstance(node, ast.Name):
            return [r for b in self.lookup(node.id, scope) for r in self._binding_refs(b, node.id)]
        if isinstance(node, ast.Attribute):
            return [x for r in self.resolve(node.value, scope) for x in self._attr(r, node.attr)]
        if isinstance(node, ast.Subscript):
            key = _const(node.slice)
            return [x for r in self.resolve(node.value, scope) for x in self._item(r, key)]
        if isinstance(node, ast.Call):
            return self._call(node, scope)
        if isinstance(node, ast.Lambda):
            return [_Ref("carrier", node=node, scope=scope, name="a lambda")]
        if isinstance(node, ast.NamedExpr):
            return self.resolve(node.value, scope)
        if isinstance(node, ast.IfExp):
            return self.resolve(node.body, scope) + self.resolve(node.orelse, scope)
        if isinstance(node, ast.BoolOp):
            return [r for v in node.values for r in self.resolve(v, scope)]
        return []

    def _binding_refs(self, b, name):
        if b.kind == "module":
            if b.data == "importlib":
                return [_Ref("pymodule", importlib, "importlib")]
            m = _speclab_module(b.data)
            return [_classify(m, b.data)] if m else []
        if b.kind == "from":
            mod, attr = b.data
            if mod == "importlib" and attr == "import_module":
                return [_Ref("builtin", importlib.import_module, "importlib.import_module")]
            m = _speclab_module(mod)
            if m is None:
                return []
            obj = getattr(m, attr, _MISSING)
            if obj is _MISSING:
                obj = _speclab_module(f"{mod}.{attr}")
            ref = _classify(obj, f"{mod}.{attr}") if obj is not None else None
            return [ref] if ref else []
        if b.kind == "builtin":
            if b.data == "get_ipython":
                return [_Ref("hidden", label=_IPYTHON, everywhere=False)]
            return [_Ref("builtin", getattr(builtins, b.data), b.data)]
        if b.kind in ("value", "iter"):
            refs = self.resolve(b.data, b.scope or self.glob) if b.kind == "value" else []
            refs = [r for r in refs if not (b.course and r.kind == "carrier")]  # the course's own lambdas
            refs = [_Ref("carrier", node=r.node, scope=r.scope or self.glob, cell=b.cell, name=name) if r.kind == "carrier"
                    and r.cell is None else r for r in refs]  # `w = lambda ...`: made in this binding's cell
            if refs or b.course:
                return refs
            held = _Ref("carrier", node=b.data, scope=b.scope or self.glob, cell=b.cell, name=name)
            return [held] if self.carried(held) else []
        if b.kind == "def" and not b.course:
            return [_Ref("carrier", node=b.data, scope=b.scope or self.glob, cell=b.cell, name=name)]
        return []

    def _attr(self, r, attr):
        if r.kind in ("module", "helper", "value", "instance") and attr.startswith("__") and attr.endswith("__") \
                and attr not in _HARMLESS_DUNDERS:
            return [_Ref("hidden", label=f"reaches into `{r.label}.{attr}`, which hides which helper does the work")]
        if r.kind == "carrier":
            return [r]
        if r.kind == "pymodule":
            return [_Ref("builtin", importlib.import_module, "importlib.import_module")] if attr == "import_module" else []
        if r.kind not in ("module", "helper", "value", "instance"):
            return []
        try:
            obj = getattr(r.obj, attr, _MISSING)
        except Exception:
            obj = _MISSING
        if obj is _MISSING and r.kind == "module":
            obj = _speclab_module(f"{r.obj.__name__}.{attr}") or _MISSING
        if obj is _MISSING:
            return []
        ref = _classify(obj, f"{r.label}.{attr}", r.owners + (r.obj,))
        return [ref] if ref else []

    def _item(self, r, key):
        if r.kind == "carrier":
            return [r]
        if r.kind != "value" or key is _MISSING:
            return []
        try:
            obj = r.obj[key]
        except Exception:
            return []
        ref = _classify(obj, f"{r.label}[{key!r}]", r.owners + (r.obj,))
        return [ref] if ref else []

    def _lookup_call(self, node, scope):
        """'getattr' / 'import' if node calls getattr or importlib.import_module / __import__, else None."""
        for f in self.resolve(node.func, scope):
            if f.kind == "builtin":
                return "getattr" if f.obj is getattr else "import"
        return None

    def _call(self, node, scope):
        out = []
        for f in self.resolve(node.func, scope):
            if f.kind == "builtin" and f.obj is getattr and len(node.args) >= 2:
                name = _const(node.args[1])
                for r in self.resolve(node.args[0], scope):
                    if isinstance(name, str):
                        out += self._attr(r, name)
                    elif r.kind in ("module", "helper", "value", "instance"):
                        out.append(_Ref("hidden", label=f"looks up an attribute of `{r.label}` by a computed name, "
                                                        "which hides which helper does the work"))
            elif f.kind == "builtin" and node.args:
                name = _const(node.args[0])
                if isinstance(name, str):
                    m = _speclab_module(name if f.obj is importlib.import_module else name.split(".")[0])
                    out += [_classify(m, name)] if m else []
                else:
                    out.append(_Ref("hidden", label="imports a module by a computed name, which hides which helper "
                                                    "does the work"))
            elif f.kind == "helper" and inspect.isclass(f.obj):
                out.append(_Ref("instance", f.obj, f"{f.label}(...)"))
        return out

    # --- walking ------------------------------------------------------------------------------
    def references(self, node, scope):
        """[(expression, refs, statement line, called, deferred)] for every helper-ish reference under node."""
        out = []
        self._walk(node, scope, getattr(node, "lineno", 0), out, deferred=False)
        return out

    def _walk(self, node, scope, line, out, deferred, called=False):
        if isinstance(node, ast.stmt):
            line = node.lineno
        if isinstance(node, _NEW_SCOPE):
            for part in _outer_parts(node):
                self._walk(part, scope, line, out, deferred)
            inner = self.scopes.get(id(node), scope)
            later = deferred or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            for part in _inner_parts(node):
                self._walk(part, inner, line, out, later)
            return
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                self._chain(node, scope, line, out, deferred, called)
            return
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            if isinstance(node.ctx, ast.Load):
                self._chain(node, scope, line, out, deferred, called)
            else:
                self._chain(node.value, scope, line, out, deferred, base=True)
                if isinstance(node, ast.Subscript):
                    self._walk(node.slice, scope, line, out, deferred)
            return
        if isinstance(node, ast.AnnAssign):  # an annotation is not a use (nor is one on a parameter)
            for part in (node.target, node.value):
                if part is not None:
                    self._walk(part, scope, line, out, deferred)
            return
        if isinstance(node, ast.Call):
            if self._lookup_call(node, scope):
                self._chain(node, scope, line, out, deferred, called)
                return
            self._walk(node.func, scope, line, out, deferred, called=True)
            for a in node.args + [k.value for k in node.keywords]:
                self._walk(a, scope, line, out, deferred)
            return
        for child in ast.iter_child_nodes(node):
            self._walk(child, scope, line, out, deferred)

    def _chain(self, node, scope, line, out, deferred, called=False, base=False):
        """A reference chain (name.attr[key], getattr(...)): report its outermost part that is a helper."""
        prefixes, rest, extra = [], None, []
        n = node
        while True:
            if isinstance(n, ast.Call):
                kind = self._lookup_call(n, scope)
                if kind is None:
                    rest = n
                    break
                prefixes.append(n)
                extra += n.args[1:] + [k.value for k in n.keywords]
                if kind == "getattr" and n.args:
                    extra += [n.func]
                    n = n.args[0]
                    continue
                extra += n.args[:1] + [n.func]
                break
            prefixes.append(n)
            if isinstance(n, ast.Attribute):
                n = n.value
            elif isinstance(n, ast.Subscript):
                extra.append(n.slice)
                n = n.value
            else:
                if not isinstance(n, ast.Name):
                    prefixes.pop()
                    rest = n
                break
        for i, p in enumerate(prefixes):
            refs = [r for r in self.resolve(p, scope)
                    if r.kind in ("helper", "instance", "hidden", "carrier")
                    or (r.kind == "module" and i == 0 and not base)]
            if refs:
                out.append((p, refs, line, called and i == 0, deferred))
                break
        for e in extra:
            if not isinstance(e, ast.Name) or e.id not in ("getattr",):
                self._walk(e, scope, line, out, deferred)
        if rest is not None:
            self._walk(rest, scope, line, out, deferred)

    def carried(self, ref, _seen=None):
        """The helpers (and hidden routes) a student-made function or value holds, followed through
        the student's other functions; the student's exercises are not followed."""
        key = id(ref.node)
        if _seen is None and key in self._carried:
            return self._carried[key]
        seen = set() if _seen is None else _seen
        if key in seen:
            return []
        seen.add(key)
        is_code = isinstance(ref.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
        found = []
        for _, refs, _, called, deferred in self.references(ref.node, ref.scope):
            for r in refs:
                if not is_code and called and not deferred and (r.kind == "carrier" or (
                        r.kind == "helper" and not inspect.isclass(r.obj))):
                    continue  # a value computed by a call is data, not the helper
                if r.kind == "carrier":
                    found += self.carried(r, seen)
                elif r.kind in ("helper", "instance", "hidden", "module"):
                    found.append(r)
        if _seen is None:
            self._carried[key] = found
        return found


_ALLOWED, _COURSE, _CONTEXT, _IMPORTS = {}, {}, {}, {}


def _source_key(source_nb):
    return tuple((c.cell_type, c.source, _nbgrader(c).get("grade_id"), bool(_nbgrader(c).get("solution")),
                  bool(_nbgrader(c).get("grade"))) for c in source_nb.cells)


def _cached(cache, key, make):
    """make() once per source notebook: every submission of an assignment comes with the same source."""
    if key not in cache:
        if len(cache) > 64:
            cache.clear()
        cache[key] = make()
    return cache[key]


def _allowed_objects(source_nb):
    """(allow_lists, {grade_id: ids of the objects it allows})."""
    return _cached(_ALLOWED, _source_key(source_nb), lambda: _make_allowed(source_nb))


def _make_allowed(source_nb):
    lists = allow_lists(source_nb)
    course = _Analysis()
    course.add_source(source_nb, solutions_as_course=True)
    allowed = {gid: {id(r.obj) for name in names for r in course.resolve_name(name)
                     if r.kind in ("helper", "instance", "module")} for gid, names in lists.items()}
    return lists, allowed


def _allowed(ref, allowed_ids):
    if ref.kind in ("helper", "module"):
        return id(ref.obj) in allowed_ids or any(inspect.isclass(o) and id(o) in allowed_ids for o in ref.owners)
    if ref.kind == "instance":
        return id(ref.obj) in allowed_ids
    return False


def _named(ref, written):
    if ref.kind == "instance":
        return f"`{written}` (an instance of {_qual(ref.obj)})"
    if ref.kind == "module":
        return f"the course module {ref.obj.__name__} (`{written}`)"
    return f"`{written}` ({_qual(ref.obj)})"


def _top_bound_names(stmt):
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in stmt.names]
    names = []
    for t in _flatten(_targets(stmt)):
        if isinstance(t, ast.Name):
            names.append(t.id)
    return names


class _Delegation:
    """The delegation findings of one submission, against its source notebook's allow-lists."""

    def __init__(self, submission_nb, source_nb, skip):
        self.lists, self.allowed = _allowed_objects(source_nb)
        self.an = _Analysis()
        self.an.add_source(source_nb)
        self.trees = {}
        for i, cell in enumerate(submission_nb.cells):
            if i in skip or cell.cell_type != "code":
                continue
            tree = _parse(cell.source)
            if tree is not None:
                self.trees[i] = tree
                self.an.add_tree(tree, i, course=False)

    def _rule(self, gid):
        names = self.lists.get(gid, ())
        return f"; {gid} may call only: {', '.join(names)}" if names else f"; {gid} may call no course helper"

    def findings(self, i, grade_id):
        """[(line, why)] for cell i of the submission."""
        tree = self.trees.get(i)
        if tree is None:
            return []
        found = []
        cell_gid = grade_id if grade_id in self.lists else None
        for stmt in tree.body:
            bound = [n for n in _top_bound_names(stmt) if n in self.an.exercises]
            gid = self.an.exercises[bound[0]] if bound else cell_gid
            if gid is not None and isinstance(stmt, (ast.Import, ast.ImportFrom)):  # `import ... as <exercise>`
                for name in bound:
                    for b in self.an.glob.bindings.get(name, []):
                        for r in self.an._binding_refs(b, name) if b.cell == i else []:
                            if r.kind in ("helper", "instance", "module") and not _allowed(r, self.allowed[gid]):
                                found.append((stmt.lineno, f"{DELEGATES} {_named(r, r.label)} as `{name}`"
                                                           + self._rule(gid)))
            try:
                uses = self.an.references(stmt, self.an.glob)
            except RecursionError:  # an expression nested thousands deep: unreadable, so not trusted
                found.append((stmt.lineno, "is nested too deeply for the integrity scan to read"))
                continue
            for node, refs, line, _, _ in uses:
                written = ast.unparse(node)
                written = written if len(written) <= 60 else written[:57] + "..."
                for r in refs:
                    if r.kind == "hidden":
                        if gid is not None or r.everywhere:
                            found.append((line, r.label))
                    elif gid is None:
                        continue
                    elif r.kind == "carrier":
                        if r.cell == i or r.cell is None:
                            continue  # made in this cell: its own lines are checked here
                        where = f"cell {r.cell}"
                        for t in self.an.carried(r):
                            if t.kind == "hidden":
                                found.append((line, f"{t.label}, through `{written}` (made in {where})"))
                            elif not _allowed(t, self.allowed[gid]):
                                what = f"an instance of {_qual(t.obj)}" if t.kind == "instance" else (
                                    t.obj.__name__ if t.kind == "module" else _qual(t.obj))
                                found.append((line, f"{DELEGATES} {what} through `{written}` "
                                                    f"(made in {where})" + self._rule(gid)))
                    elif r.kind == "module":
                        found.append((line, f"passes {_named(r, written)} around, which hides which helper does "
                                            "the work" + self._rule(gid)))
                    elif not _allowed(r, self.allowed[gid]):
                        found.append((line, f"{DELEGATES} {_named(r, written)}" + self._rule(gid)))
        at = _statement_lines(tree)
        return sorted({(at.get(line, line), why) for line, why in found})


def scan(submission_nb, source_nb):
    """Findings for every student-written code cell of a submission."""
    trusted, protected, modules, exercises = _cached(_CONTEXT, _source_key(source_nb), lambda: course_context(source_nb))
    imports = _cached(_IMPORTS, _source_key(source_nb), lambda: course_imports(source_nb))
    scanned = [i for i, cell in enumerate(submission_nb.cells)
               if cell.cell_type == "code" and not _nbgrader(cell).get("grade")  # graded test cells are
               and cell.source.strip() not in trusted]                          # restored before grading
    delegation = _Delegation(submission_nb, source_nb, skip=set(range(len(submission_nb.cells))) - set(scanned))
    findings = []
    for i in scanned:
        cell = submission_nb.cells[i]
        grade_id = _nbgrader(cell).get("grade_id", "")
        lines = cell.source.splitlines()
        code = lambda line: lines[line - 1] if 0 < line <= len(lines) else ""  # noqa: E731
        tampering = scan_cell(cell.source, protected, modules, exercises, imports)
        reference = {line for line, why in tampering if "reference" in why}
        found = [Finding(i, grade_id, line, code(line), why, kind="delegate" if line in reference else "tamper")
                 for line, why in tampering]
        found += [Finding(i, grade_id, line, code(line), why, kind="delegate")
                  for line, why in delegation.findings(i, grade_id)
                  if not (line in reference and why.startswith(DELEGATES))]  # said once, by the reference rule
        findings += sorted(found, key=lambda f: f.line)
    return findings


def sanitize(submission_nb, findings):
    """A copy of the notebook with every flagged statement replaced by `pass`."""
    nb = copy.deepcopy(submission_nb)
    by_cell = {}
    for f in findings:
        by_cell.setdefault(f.cell, set()).add(f.line)
    for i, lines in by_cell.items():
        cell = nb.cells[i]
        if _cell_magic(cell.source):  # IPython runs the whole cell as one statement
            cell.source = "pass  # removed by the integrity scan (the cell starts with a cell magic)"
            continue
        tree = _parse(cell.source)
        if tree is None:
            continue
        src = cell.source.splitlines()
        done = []
        for node in ast.walk(tree):  # outer statements before the statements inside them
            if not isinstance(node, ast.stmt) or node.lineno not in lines:
                continue
            if any(start <= node.lineno <= end for start, end in done):
                continue  # already removed with the statement around it
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            end = node.end_lineno or node.lineno
            first = src[start - 1]
            src[start - 1] = first[: len(first) - len(first.lstrip())] + "pass  # removed by the integrity scan"
            for j in range(start, end):
                src[j] = ""
            done.append((start, end))
        cell.source = "\n".join(src)
    return nb


def scan_file(submission_path, source_path):
    return scan(nbformat.read(submission_path, as_version=4), nbformat.read(source_path, as_version=4))
