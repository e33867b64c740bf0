"""What a name in a notebook can hold: the course helpers it reaches, followed through the student's code.

A "course helper" is any callable reachable from the speclab package (a function, a class, a
method, a callable instance). Names are resolved to the real objects by importing speclab
here, so data (V, TOKENS, COLORS, tables) is never a helper, and a helper is recognised under
any name: `from speclab import costs as c; c.best_k`, `f = temper`, `getattr(costs, "best_k")`,
`importlib.import_module("speclab.costs")`, `ngram.NGram(...)(ctx)`, a function of the
student's own (in any cell) that calls one. Bindings are collected from every cell, in any
order (a function looks its globals up when it is called, not when it is defined).
"""
import ast
import builtins
import importlib
import inspect
import types

from ..cells import grade_id, is_solution
from .syntax import _MISSING, _cached, _const, _parse, _source_key

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


_COURSE = {}   # the course cells' bindings, per source notebook


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
            if is_solution(cell):
                for node in (tree.body if tree else []):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        self.exercises[node.name] = grade_id(cell) or ""
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
