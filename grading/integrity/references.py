"""What a name in a notebook can hold: the course helpers it reaches, followed through the student's code.

A "course helper" is any callable reachable from the speclab package (a function, a class, a
method, a callable instance). Names are resolved to the real objects by importing speclab
here, so data (V, TOKENS, COLORS, tables) is never a helper, and a helper is recognised under
any name: `from speclab.speed import costs as c; c.best_k`, `f = temper`, `getattr(costs, "best_k")`,
`importlib.import_module("speclab.speed.costs")`, `ngram.NGram(...)(ctx)`, a function of the
student's own (in any cell) that calls one. Where each name is bound is bindings.py's part; here,
what a binding holds (resolving) and which helpers a piece of code reaches (walking). The module stays
one piece of about 350 lines, one class, because resolving and walking call each other: a student's
function is walked to find what it carries, and what it carries is what a name bound to it resolves to.
"""
import ast
import builtins
import importlib
import inspect
import types

from .bindings import _NEW_SCOPE, _Bindings, _inner_parts, _outer_parts
from .syntax import _MISSING, _const


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


_HARMLESS_DUNDERS = {"__name__", "__qualname__", "__doc__", "__module__"}


_IPYTHON = ("uses IPython (a magic, a shell command or get_ipython()), which the integrity scan "
            "cannot read (write exercises in plain Python)")


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


class _Analysis(_Bindings):
    """Bindings of one notebook (bindings.py) and what names can hold."""

    def __init__(self):
        super().__init__()
        self._memo, self._busy, self._carried = {}, set(), {}

    def add_source(self, source_nb, solutions_as_course=False):
        super().add_source(source_nb, solutions_as_course)
        self._memo.clear()

    def add_tree(self, tree, cell, course):
        super().add_tree(tree, cell, course)
        self._memo.clear()

    # --- resolving ----------------------------------------------------------------------------
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
