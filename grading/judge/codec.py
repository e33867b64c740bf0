"""The judge's codec: what crosses between the grading worker (the judge) and the student's kernel, both ways.

This file runs on both sides: imported by the judge, and sent as text to the sandboxed kernel, where agent.py's
text runs after it in the same module (so it needs only the standard library and numpy, and imports nothing of
the course's but the classes of REGISTRY). Every byte from the kernel is the student's: the rules below are
enforced when DECODING, by whichever side receives.

Values cross by value, as JSON: None, bool, int, float, str, list, and tagged dicts for a tuple, a dict, a set,
a base numpy array of a numeric or bool dtype (dtype, shape, bytes), a numpy scalar, a numpy Generator (PCG64
state), and an instance of one of the course classes in REGISTRY (its full name and its fields, each checked).
Nothing else is built: no name is looked up beyond REGISTRY's (no attribute chain, no dunder, no class of a
library, no `__new__` of anything else), and what cannot be checked is a CodecError, never an object. The judge
adds its own tags (agent.py's and judge.py's hooks): a callback (an id), an object it keeps (an id), an
argument of the call handed back (its index), an exercise of the kernel (its name), a course function of
FUNCTIONS (its name, looked up in that table only), a large dict lent by handle (see HOLD).
"""
import base64
import builtins
import copy
import json
import math
import operator

import numpy as np

KINDS = "biufc"          # bool, signed, unsigned, float, complex: plain bytes, nothing to run
MAX_DEPTH = 64
SCALARS = {np.dtype(c).type for c in "?bhilqBHILQefdgFD"}
PLAIN = {type(None), bool, int, float, str, list, tuple, dict, set, frozenset, np.ndarray} | SCALARS
SEEDED = np.random.SeedSequence(0)  # what a received generator is built from before its state is set
HASHABLE = {type(None), bool, int, float, str, tuple, frozenset} | SCALARS  # what a set received may hold
JSON_SCALARS = {type(None), bool, int, float, str}  # each encodes to itself (a hook has nothing to say of one)


try:
    from .registry import FUNCTIONS, REGISTRY, pcg64_words
except ImportError:  # in the kernel: registry.py's text ran first, in this module's own namespace
    pass


# A dict of at least HOLD entries, an argument or inside one, is sent once per kernel and then named by a
# handle: 08's tests hand ngram_dist the count tables of a whole corpus (up to 49,000 contexts, 53 MB of
# JSON, 1.8 s to encode, send and decode) about 150 times. Each side seals what it holds (Seal) and checks
# the seal before each use: the judge sends a dict again if its tests changed it; the kernel lends the dict
# itself, restored first if an earlier call wrote into it, so that a call sees the judge's values as a copy
# would show them. What a function does to a lent dict is never sent back: a test wanting that passes a
# smaller value.
HOLD = 1_000
HOLD_ROWS = 64  # a count table (tuple keys, array values) is held from this many rows: 08's 95-context tables, else
                # encoded three times a call on each side, 150 calls of test_ngram_dist


def count_table(x):
    """Is the dict x shaped as a count table: tuple keys and array values (what rows_of sends compactly)?"""
    return all(type(k) is tuple for k in x) and all(type(v) is np.ndarray for v in x.values())


class CodecError(TypeError):
    pass


class Missing(CodecError):
    """A handle the kernel does not hold (a restarted kernel): the judge sends the value again."""


IMMUTABLE = {type(None), bool, int, float, complex, str, bytes} | SCALARS


def fresh(x):
    """A copy of a received value that shares nothing mutable with it."""
    t = type(x)
    if t in IMMUTABLE:
        return x
    if t is dict:
        return {k: fresh(v) for k, v in x.items()}
    if t is list:
        return [fresh(v) for v in x]
    if t is tuple:
        return tuple(fresh(v) for v in x)
    if t is np.ndarray:
        return x.copy()
    return copy.deepcopy(x)


def digest(x):
    """A hash of plain data's contents (arrays by their bytes), or None if x holds anything else."""
    t = type(x)
    if t is dict and x and all(type(v) is np.ndarray for v in x.values()):  # count tables: one block of bytes
        vals, keys = list(x.values()), tuple(x)  # (82 ms one by one for 08's largest table, 20 ms so)
        dtypes = {v.dtype for v in vals}
        if len(dtypes) == 1 and vals[0].dtype.kind in KINDS:  # keys: hashable, as a dict's are
            try:
                block = np.stack(vals)
            except ValueError:  # not all of one shape: one by one, below
                block = None
            if block is not None:
                return hash(("dict", keys, block.dtype.str, block.shape, block.tobytes()))
    if t is np.ndarray:
        return hash((x.dtype.str, x.shape, x.tobytes())) if x.dtype.kind in KINDS else None
    if t in IMMUTABLE:
        return hash((t.__name__, x))
    if t is dict or t is list or t is tuple:
        parts = [(k, digest(v)) for k, v in x.items()] if t is dict else [digest(v) for v in x]
        if any((p[1] if t is dict else p) is None for p in parts):
            return None
        return hash((t.__name__, tuple(parts)))
    return None


class Seal:
    """A held dict as it was, to tell before each use whether anything wrote into it since: where every value is
    a view into one array `block` (count tables are rows of one), a copy of it compared bit for bit (08's
    largest, 36 MB: about 5 ms, where a digest took 20 to 80 and a copy 30 to 60); else its digest (None:
    not plain data, nothing is held)."""

    def __init__(self, x):
        self.keys, self.values = list(x), list(x.values())
        base = getattr(self.values[0], "base", None) if self.values else None
        if type(base) is not np.ndarray or not base.flags.c_contiguous or base.dtype.kind not in KINDS \
                or not all(type(v) is np.ndarray and v.base is base for v in self.values):
            base = None
        self.block, self.pristine = base, None if base is None else base.copy()
        self.digest = digest(x) if base is None else True

    def intact(self, x):
        if len(x) != len(self.values) or not all(map(operator.is_, x, self.keys)) \
                or not all(map(operator.is_, x.values(), self.values)):
            return False
        if self.block is None:
            return self.digest is not None and digest(x) == self.digest
        return np.array_equal(_words(self.block), _words(self.pristine))  # bit for bit: NaN and -0.0 too


UINTS = {1: "<u1", 2: "<u2", 4: "<u4", 8: "<u8"}  # an item's bits, as one unsigned int


def _words(a):
    """A contiguous array's bytes as one flat array of unsigned ints, 8 bytes each where they tile (3 to 4 times
    faster to compare than bytes)."""
    flat = a.reshape(-1).view(np.uint8)
    return flat.view(np.uint64) if flat.size % 8 == 0 else flat


def _b64(a):
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()


def _ints(a):
    """[dtype, base64] of integers in the narrowest little-endian signed type that holds them (token ids: a byte)."""
    lo, hi = (int(a.min()), int(a.max())) if a.size else (0, 0)
    dt = next(d for d in ("<i1", "<i2", "<i4", "<i8") if np.iinfo(d).min <= lo and hi <= np.iinfo(d).max)
    return [dt, _b64(a.astype(dt))]


def _unints(body, count=None):
    if type(body) is not list or len(body) != 2 or body[0] not in ("<i1", "<i2", "<i4", "<i8"):
        raise CodecError("malformed table")
    return _unb64(body[1], body[0], count).astype(np.int64)


def _unb64(text, dtype, count=None):
    """count items of dtype from base64 text (None: as many as there are)."""
    if type(text) is not str:
        raise CodecError("malformed table")
    raw, size = base64.b64decode(text.encode("ascii"), validate=True), np.dtype(dtype).itemsize
    if len(raw) != (len(raw) // size if count is None else count) * size:
        raise CodecError("a table's bytes do not match its size")
    return np.frombuffer(raw, dtype=dtype)


def rows_of(x):
    """{'rows': [n, m, keys, dtype, row shape, positions, bits]} for a dict of n keys, each a tuple of m ints, whose
    values are arrays of one shape and numeric dtype, sent as the entries whose bits are not all zero (08's count
    tables: 1.5% of them, 0.8 MB where a row at a time was 48 MB of JSON and 144,000 arrays to decode); else None."""
    keys, vals = list(x), list(x.values())
    if not keys or set(map(type, keys)) != {tuple} or set(map(type, vals)) != {np.ndarray} \
            or len(set(map(len, keys))) != 1 or not set(map(type, (t for k in keys for t in k))) <= {int}:
        return None
    dt, shape = vals[0].dtype, vals[0].shape
    if dt.kind not in KINDS or dt.fields is not None or dt.itemsize not in UINTS \
            or any(v.dtype != dt or v.shape != shape for v in vals):
        return None
    try:
        ids = np.array(keys, dtype=np.int64).reshape(len(keys), len(keys[0]))
    except OverflowError:
        return None
    bits = np.stack(vals).reshape(-1).view(UINTS[dt.itemsize])
    at = np.flatnonzero(bits)
    return {"rows": [len(keys), len(keys[0]), _ints(ids), dt.str, [int(n) for n in shape], _ints(at), _b64(bits[at])]}


def table_from(body):
    """The dict rows_of's body stands for, its values the rows of one array (a block, as Seal wants)."""
    if type(body) is not list or len(body) != 7:
        raise CodecError("malformed table")
    n, m, keys, dt, shape, at, bits = body
    if type(n) is not int or type(m) is not int or n < 0 or m < 0 or type(shape) is not list \
            or not all(type(k) is int and k >= 0 for k in shape):
        raise CodecError("malformed table")
    dt = _dtype(dt)
    if dt.itemsize not in UINTS:
        raise CodecError("malformed table")
    ids = _unints(keys, n * m).reshape(n, m)
    size = n * math.prod(shape)
    at = _unints(at)
    if len(at) and (int(at.min()) < 0 or int(at.max()) >= size):
        raise CodecError("a table's entry lies outside it")
    block = np.zeros((n, *shape), dtype=dt)
    block.reshape(-1).view(UINTS[dt.itemsize])[at] = _unb64(bits, UINTS[dt.itemsize], len(at))
    table = dict(zip(map(tuple, ids.tolist()), block))
    if len(table) != n:
        raise CodecError("a table's keys repeat")
    return table


def full_name(obj):
    """'speclab.x:Name' for a class or function by its own `__module__` and `__qualname__`: a name only, never
    looked up here (what it names is found, if at all, in REGISTRY or FUNCTIONS by whoever receives it)."""
    module, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if type(module) is not str or type(qual) is not str:
        return None
    return f"{module}:{qual}"


def registered_class(name):
    """The course class REGISTRY names `name`: its module imported, one attribute read, checked to be that very
    class (no chain, no dunder: the name is one of REGISTRY's keys, or a CodecError)."""
    import importlib

    if type(name) is not str or name not in REGISTRY:
        raise CodecError(f"{str(name)[:100]!r} is not a course class that can cross")
    module, _, qual = name.partition(":")
    cls = getattr(importlib.import_module(module), qual, None)
    if type(cls) is not type or full_name(cls) != name:
        raise CodecError(f"{name!r} is not a course class that can cross")
    return cls


def encode(x, hook=None, depth=0):
    """x as JSON-able data; hook(x) may answer first (refs, functions, course objects), or return None."""
    if depth > MAX_DEPTH:
        raise CodecError("a value nested too deep to send")
    t = type(x)
    if hook is not None:
        out = hook(x)
        if out is not None:
            return out
    if x is None or t is bool or t is int or t is float or t is str:
        return x
    if t is list:
        if set(map(type, x)) <= JSON_SCALARS:  # a list of tokens, as is (08: contexts of 4,000; a loop: 5x slower)
            return list(x)
        return [encode(v, hook, depth + 1) for v in x]
    if t is tuple:
        return {"tuple": [encode(v, hook, depth + 1) for v in x]}
    if t is dict:
        return {"dict": [[encode(k, hook, depth + 1), encode(v, hook, depth + 1)] for k, v in x.items()]}
    if t is set or t is frozenset:
        return {t.__name__: [encode(v, hook, depth + 1) for v in x]}
    if t is np.ndarray:
        if x.dtype.kind not in KINDS or x.dtype.fields is not None or type(x.dtype).__module__.split(".")[0] != "numpy":
            raise CodecError(f"an array of dtype {x.dtype} cannot be sent")
        return {"nd": [x.dtype.str, [int(n) for n in x.shape], base64.b64encode(x.tobytes()).decode()]}
    if t in SCALARS:
        return {"np": [np.dtype(t).str, base64.b64encode(np.asarray(x).tobytes()).decode()]}
    if t is np.random.Generator and type(x.bit_generator) is np.random.PCG64:
        s = x.bit_generator.state
        return {"rng": [s["state"]["state"], s["state"]["inc"], s["has_uint32"], s["uinteger"]]}
    raise CodecError(f"a {t.__module__}.{t.__qualname__} cannot be sent between the grader and the kernel")


def course_object(x, hook, depth=0):
    """{'obj': [name, fields]} for an instance of a REGISTRY class (exactly that class), else None."""
    name = full_name(type(x))
    if name not in REGISTRY or not isinstance(getattr(x, "__dict__", None), dict):
        return None
    return {"obj": [name, encode(dict(vars(x)), hook, depth + 1)]}


def _pcg64(words):
    """A Generator from PCG64's state as four ints (not numpy's nested dict: 16 decodes a crossing, 20,000 in 03)."""
    if not pcg64_words(words):
        raise CodecError("a generator's state is four ints in PCG64's ranges")
    g = np.random.Generator(np.random.PCG64(SEEDED))  # its state replaced: no entropy drawn (10 us of 18)
    g.bit_generator.state = {"bit_generator": "PCG64", "state": {"state": words[0], "inc": words[1]},
                             "has_uint32": words[2], "uinteger": words[3]}
    return g


def _dtype(text):
    if type(text) is not str:
        raise CodecError("a dtype must be a string")
    dt = np.dtype(text)
    if dt.kind not in KINDS or dt.fields is not None or dt.subdtype is not None:
        raise CodecError(f"dtype {text!r} cannot be received")
    return dt


def decode(j, hook=None, depth=0):
    """The value JSON data `j` stands for, built from exact types; hook(tag, body) builds refs, functions,
    callbacks and course objects (it raises CodecError for what its side does not accept)."""
    if depth > MAX_DEPTH:
        raise CodecError("a value nested too deep to receive")
    t = type(j)
    if j is None or t is bool or t is int or t is float or t is str:
        return j
    if t is list:
        if set(map(type, j)) <= JSON_SCALARS:
            return list(j)
        return [decode(v, hook, depth + 1) for v in j]
    if t is not dict or len(j) != 1:
        raise CodecError("malformed value")
    (tag, body), = j.items()
    if tag == "tuple" and type(body) is list:
        return tuple(decode(v, hook, depth + 1) for v in body)
    if tag == "dict" and type(body) is list:
        out = {}
        for pair in body:
            if type(pair) is not list or len(pair) != 2:
                raise CodecError("malformed dict")
            key = decode(pair[0], hook, depth + 1)
            if type(key) not in (str, int, float, bool, tuple) and key is not None:
                raise CodecError("a dict key must be a plain value")
            out[key] = decode(pair[1], hook, depth + 1)
        return out
    if tag in ("set", "frozenset") and type(body) is list:
        items = [decode(v, hook, depth + 1) for v in body]
        if not all(type(v) in HASHABLE for v in items):
            raise CodecError("a set may hold only plain values")
        return (set if tag == "set" else frozenset)(items)
    if tag == "nd" and type(body) is list and len(body) == 3:
        dt, shape, data = _dtype(body[0]), body[1], body[2]
        if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape) or type(data) is not str:
            raise CodecError("malformed array")
        raw = base64.b64decode(data.encode("ascii"), validate=True)
        if len(raw) != math.prod(shape) * dt.itemsize:  # exact: np.prod's wrapper cost 20 us, 3 a crossing in 03
            raise CodecError("an array's bytes do not match its shape")
        return np.frombuffer(raw, dtype=dt).reshape(shape).copy()
    if tag == "np" and type(body) is list and len(body) == 2 and type(body[1]) is str:
        dt = _dtype(body[0])
        raw = base64.b64decode(body[1].encode("ascii"), validate=True)
        if len(raw) != dt.itemsize:
            raise CodecError("malformed scalar")
        return np.frombuffer(raw, dtype=dt)[0]
    if tag == "rng":
        return _pcg64(body)
    if tag == "obj" and type(body) is list and len(body) == 2:
        return _course_instance(body[0], decode(body[1], hook, depth + 1))
    if hook is not None:
        return hook(tag, body)
    raise CodecError(f"cannot receive a {tag!r}")


def _course_instance(name, state):
    """An instance of REGISTRY's class `name` holding `state`, each field checked (all of them, no other)."""
    cls, fields = registered_class(name), REGISTRY.get(name)
    if type(state) is not dict or set(state) != set(fields):
        raise CodecError(f"a {name} must hold exactly {sorted(fields)}")
    for field, ok in fields.items():
        if not ok(state[field]):
            raise CodecError(f"a {name}'s {field} is not what the course's class holds")
    obj = cls.__new__(cls)
    obj.__dict__.update(state)
    return obj


def dumps(x, hook=None):
    return json.dumps(encode(x, hook), allow_nan=True, separators=(",", ":"))


def error_of(e, limit=2000):
    """[builtin base class name, the exception's own name, message] of an exception, bounded."""
    base = next((k.__name__ for k in type(e).__mro__ if getattr(builtins, k.__name__, None) is k), "Exception")
    try:
        msg = str(e)
    except BaseException:
        msg = "?"
    return [base, type(e).__name__[:100], msg[:limit]]


def mutable(x):
    """Can a function change x in place (so that the other side must see the change)?"""
    if type(x) in (list, dict, set, np.ndarray, np.random.Generator):
        return True
    return not callable(x) and course_object(x, None) is not None  # a callable one stays with the judge


def plain_hook(x):
    """For the state of an argument: course functions of FUNCTIONS by name, course objects by state, nothing
    else."""
    if type(x) in PLAIN:
        return None
    if callable(x) and full_name(x) in FUNCTIONS:
        return {"fn": full_name(x)}
    return course_object(x, plain_hook)
