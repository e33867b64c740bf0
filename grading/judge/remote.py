"""What of the judge's may be used from the kernel by reference (a Remote there): the judge's side only."""
import types

COURSE = "speclab"


def _module_of(x):
    """The module a function, method or class was defined in; an other object's class's."""
    if isinstance(x, (types.FunctionType, types.MethodType, type)):
        return getattr(x, "__module__", None)
    return getattr(type(x), "__module__", None)


def ours(x):
    """Defined by the notebook's cells or a test's (the judge runs them as __main__) or by the course: what
    may stay in the judge and be used from the kernel through a callback or a Remote, never a library's
    function or object (a module, os.system, a frame)."""
    m = _module_of(x)
    return type(m) is str and (m == "__main__" or m == COURSE or m.startswith(COURSE + "."))


def remotable(x):
    """Can x cross by reference (a Remote in the kernel)? An instance of a plain class of ours that is not
    callable (a callable is called back instead)."""
    cls = type(x)
    return type(cls) is type and not callable(x) and ours(x)


def public_methods(x):
    """The names of x's public methods (plain functions of its class, not shadowed by an attribute of its own):
    what a Remote calls in one crossing; every other public name is read from the judge."""
    names = set()
    for klass in reversed(type(x).__mro__):
        for k, v in vars(klass).items():
            if type(k) is str and not k.startswith("_"):
                (names.add if isinstance(v, types.FunctionType) else names.discard)(k)
    own = getattr(x, "__dict__", None)
    return sorted(names - set(own) if isinstance(own, dict) else names)
