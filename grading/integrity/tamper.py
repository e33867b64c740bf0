"""Tampering: student code that changes what the graded tests rely on, or reaches what could.

Flagged, with the line: an assignment into a module or into builtins, setattr / exec / globals() and
their kind, a top-level rebinding of a name the tests use, the course's reference version of an
exercise, the IPython shell (get_ipython(), magics whose effect cannot be read, imports of it),
sys's hooks, attributes that rewrite code or read frames, and attributes set on a function's
parameters. What the course's own cells bind and import (course_context, course_imports) is
harmless to bind or import again.
"""
import ast

from ..cells import is_graded, is_solution
from .syntax import (_flatten, _import_origins, _imported, _magic, _parse, _root, _statement_lines, _targets,
                     free_names)

BUILTIN_MODULES = {"builtins", "__builtins__", "sys", "importlib", "speclab"}


DANGEROUS_CALLS = {"setattr", "delattr", "exec", "eval", "compile", "__import__", "globals", "vars"}


# Attributes that read or rewrite code, frames or namespaces: a function handed in as an argument can have its
# __code__ replaced (the test helpers included), a frame's f_globals is the notebook's namespace.
DANGEROUS_ATTRS = {"__code__", "__globals__", "__builtins__", "__closure__", "__defaults__", "__kwdefaults__",
                   "__dict__", "__subclasses__", "__bases__", "__mro__", "__func__", "__wrapped__", "f_globals",
                   "f_locals", "f_back", "f_builtins", "f_code", "gi_frame", "cr_frame", "ag_frame", "tb_frame",
                   "_getframe"}


# What in sys changes how every later cell runs or what it shows (a result shown by sys.displayhook inside a
# failing test once counted as full marks), or where imports come from.
SYS_HOOKS = {"displayhook", "excepthook", "settrace", "setprofile", "path", "meta_path", "path_hooks",
             "path_importer_cache", "modules", "_getframe", "addaudithook", "breakpointhook"}


# Modules that reach the IPython shell (input transformers, events, the history of every test run), load code
# from files or memory, or reach every object (gc.get_objects): a student's cell imports none of them unless
# the course's own cells import the same.
SHELL_MODULES = {"IPython", "ipykernel", "jupyter_client", "zmq", "traitlets", "comm", "gc", "ctypes", "runpy",
                 "zipimport", "imp", "pkgutil", "marshal", "importlib.util", "importlib.machinery", "importlib.abc",
                 "importlib._bootstrap", "inspect", "code", "codeop", "pickle", "dill"}


# IPython magics whose argument or body is Python the scan reads (the magic itself changes nothing), and
# magics that run nothing of the student's; any other magic, shell command or get_ipython() is flagged.
AGENT = "__speclab_judge__"  # the judge's agent, a global of the kernel (grading/judge/agent.py)
PYTHON_MAGICS = {"time", "timeit", "capture", "prun"}


HARMLESS_MAGICS = {"matplotlib", "pinfo", "pinfo2", "psearch", "who", "whos", "pwd"}


def course_context(source_nb):
    """What the course's own cells provide: trusted sources, protected names, exercise names."""
    trusted, protected, modules, exercises = set(), set(), set(BUILTIN_MODULES), set()
    for cell in source_nb.cells:
        if cell.cell_type != "code":
            continue
        tree = _parse(cell.source)
        if is_solution(cell):
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
        if is_graded(cell):
            protected |= free_names(cell.source)
    protected -= exercises
    protected = {n for n in protected if not n.startswith("_")}  # test-local scratch names
    return trusted, protected, modules, exercises


def course_imports(source_nb):
    """{name: origins} of what the course's own cells import: importing the same again is harmless."""
    out = {}
    for cell in source_nb.cells:
        if cell.cell_type == "code" and not is_solution(cell):
            tree = _parse(cell.source)
            for name, origins in (_import_origins(tree) if tree else {}).items():
                out.setdefault(name, set()).update(origins)
    return out


def scan_cell(src, protected, modules, exercises, imports=None):
    """[(line, why)] for one cell's source (imports: course_imports, re-imports of which are harmless)."""
    tree = _parse(src)
    if tree is None:
        return []
    found = _shell_findings(tree, protected, modules, exercises, imports)
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


def _shell_findings(tree, protected, modules, exercises, imports):
    """[(line, why)]: the IPython shell reached (get_ipython, magics, imports of it), sys's hooks, attributes
    that rewrite code or read frames, attributes set on a function's parameters. The Python inside a time,
    timeit, capture or prun magic is scanned as if it stood there."""
    found, inside = [], set()
    for node in ast.walk(tree):
        magic = _magic(node)
        if magic is None:
            continue
        kind, name, text = magic
        inside |= {id(n) for n in ast.walk(node.func.value)}
        sign = "%%" if kind == "run_cell_magic" else "%"
        if name in PYTHON_MAGICS:
            for line, why in scan_cell(text, protected, modules, exercises, imports):
                found.append((node.lineno, f"{why} (inside {sign}{name})"))
        elif name not in HARMLESS_MAGICS:
            found.append((node.lineno, f"runs the IPython magic {sign}{name}, whose effect the integrity scan "
                                       "cannot read"))
    sys_names = {"sys"} | {a.asname for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
                           if a.name == "sys" and a.asname}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Name) and node.id == "get_ipython" or isinstance(node, ast.Attribute)
                and node.attr == "get_ipython") and id(node) not in inside:
            found.append((node.lineno, "uses get_ipython(), the IPython shell itself (a shell command, or what "
                                       "it runs every later cell through)"))
        elif _names_agent(node):
            found.append((node.lineno, f"uses {AGENT}, the grader's agent in the kernel, which only the grader may "
                                       "talk to"))
        elif isinstance(node, ast.Attribute) and node.attr in DANGEROUS_ATTRS:
            found.append((node.lineno, f"reaches into `.{node.attr}`, which can rewrite code or read the "
                                       "notebook's namespace, the tests' helpers included"))
        elif isinstance(node, ast.Attribute) and node.attr in SYS_HOOKS and _root(node) in sys_names:
            found.append((node.lineno, f"touches sys.{node.attr}, which changes how later cells run, what they "
                                       "show or where imports come from"))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for mod, attr, a in _imported(node):
                if attr in SYS_HOOKS and mod == "sys":
                    found.append((node.lineno, f"imports sys.{attr}, which changes how later cells run"))
                full = f"{mod}.{attr}" if attr else mod
                risky = next((m for m in SHELL_MODULES if full == m or full.startswith(m + ".")), None)
                if risky and (mod, attr) not in (imports or {}).get(a.asname or (attr or mod).split(".")[0], set()):
                    found.append((node.lineno, f"imports {full}, which reaches the IPython shell, loads code or "
                                               "reads frames: none of which an exercise needs"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            found += _parameter_attributes(node)
    return found


def _names_agent(node):
    """Does node name the grader's agent (a name, an attribute, or a string that spells it: globals()[...])?"""
    text = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else (
        node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else "")
    return "speclab_judge" in text


def _parameter_attributes(func):
    """An attribute set on a function's parameter (or on what a loop over one yields): a module or a test helper
    handed in (`def f(m): m.isclose = ...`, then `f(np)`). A method's first parameter (self) is its own."""
    a = func.args
    params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p is not None]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    names, found = set(params), []
    body = func.body if isinstance(func.body, list) else [func.body]
    for node in (n for stmt in body for n in ast.walk(stmt)):
        if isinstance(node, (ast.For, ast.comprehension)) and _root(node.iter) in names:
            names |= {t.id for t in ast.walk(node.target) if isinstance(t, ast.Name)}
    for node in (n for stmt in body for n in ast.walk(stmt)):
        for t in _flatten(_targets(node)):
            if isinstance(t, ast.Attribute) and _root(t) in names:
                found.append((node.lineno, f"sets an attribute of `{_root(t)}`, which the function is handed: a "
                                           "module or a test helper could be changed that way"))
    return found
