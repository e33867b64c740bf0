"""The judge's codec, and the small agent it runs in the student's kernel.

This one file is imported by the grading worker (the judge) and sent, as text, to the sandboxed kernel,
where `install` binds the agent as `__speclab_judge__`, which listens on a Unix socket for the judge (Agent).
It needs only the standard library and numpy.

Values cross by value, as JSON: None, bool, int, float, str, list, and tagged dicts for a tuple, a dict, a set,
a base numpy array of a numeric or bool dtype (dtype, shape, bytes), a numpy scalar, a numpy Generator
(PCG64 state), an instance of a course class (its qualified name and plain attributes), a course
function (its qualified name), an exercise of the kernel (its name), a callback of the judge (an id), an
object of the judge's used by reference (an id: a Remote here, the judge's very object there), an
argument of the current call handed back (its index), or a large dict lent by handle (`keep` the
first time, `held` after: see HOLD). `decode` builds only exact types: a float
subclass, an ndarray subclass or any object with methods of the student's never comes out of it.
"""
import base64
import builtins
import io
import json
import types

import numpy as np

KINDS = "biufc"          # bool, signed, unsigned, float, complex: plain bytes, nothing to run
MAX_DEPTH = 64
SCALARS = {np.dtype(c).type for c in "?bhilqBHILQefdgFD"}
COURSE = "speclab"  # the only package whose functions and classes cross by name
PLAIN = {type(None), bool, int, float, str, list, tuple, dict, set, frozenset, np.ndarray} | SCALARS
HASHABLE = {type(None), bool, int, float, str, tuple, frozenset} | SCALARS  # what a set received may hold
JSON_SCALARS = {type(None), bool, int, float, str}  # each encodes to itself (a hook has nothing to say of one)


# A dict of at least HOLD entries, an argument or inside one, is sent once per kernel and then named by a
# handle: 08's tests hand ngram_dist the count tables of a whole corpus (up to 49,000 contexts, 53 MB of
# JSON, 1.8 s to encode, send and decode) about 150 times. The kernel keeps what it received and lends
# each call a fresh copy of it (29 ms for those tables); the judge sends it again only if its own dict
# changed since (a digest of its contents). What a function does to a lent copy is not sent back: a
# test that wants a change back passes a smaller value.
HOLD = 1_000


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
    import copy

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


def _b64(data):
    return base64.b64encode(data).decode("ascii")


def _course_name(obj):
    """'speclab.x:qual.name' if obj is a function or class the course's package defines and that name reaches
    it (so the other side can find the very same object), else None."""
    module, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if type(module) is not str or type(qual) is not str or not (module == COURSE or module.startswith(COURSE + ".")):
        return None
    try:
        found = resolve(f"{module}:{qual}")
    except CodecError:
        return None
    return f"{module}:{qual}" if found is obj else None


def resolve(name):
    """The course function or class named 'speclab.x:qual.name' (nothing else can be named)."""
    import importlib

    module, _, qual = str(name).partition(":")
    if not (module == COURSE or module.startswith(COURSE + ".")) or not qual or "<" in qual:
        raise CodecError(f"{name!r} is not a course function")
    try:
        obj = importlib.import_module(module)
        for part in qual.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise CodecError(f"{name!r} is not a course function ({type(e).__name__})") from None
    return obj


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
        if all(type(v) in JSON_SCALARS for v in x):  # a list of tokens, as is (08: contexts of 4,000)
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
        return {"nd": [x.dtype.str, [int(n) for n in x.shape], _b64(np.ascontiguousarray(x).tobytes())]}
    if t in SCALARS:
        return {"np": [np.dtype(t).str, _b64(np.asarray(x).tobytes())]}
    if t is np.random.Generator and type(x.bit_generator) is np.random.PCG64:
        return {"rng": encode(x.bit_generator.state, None, depth + 1)}
    raise CodecError(f"a {t.__module__}.{t.__qualname__} cannot be sent between the grader and the kernel")


def course_object(x, hook, depth=0):
    """{'obj': ...} for an instance of a course class holding plain attributes, else None."""
    cls = type(x)
    name = _course_name(cls)
    if name is None or not isinstance(getattr(x, "__dict__", None), dict) or type(cls) is not type:
        return None
    return {"obj": [name, encode(dict(vars(x)), hook, depth + 1)]}


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
        if all(type(v) in JSON_SCALARS for v in j):
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
        if len(raw) != int(np.prod(shape, dtype=np.int64)) * dt.itemsize:
            raise CodecError("an array's bytes do not match its shape")
        return np.frombuffer(raw, dtype=dt).reshape(shape).copy()
    if tag == "np" and type(body) is list and len(body) == 2 and type(body[1]) is str:
        dt = _dtype(body[0])
        raw = base64.b64decode(body[1].encode("ascii"), validate=True)
        if len(raw) != dt.itemsize:
            raise CodecError("malformed scalar")
        return np.frombuffer(raw, dtype=dt)[0]
    if tag == "rng":
        state = decode(body, None, depth + 1)
        g = np.random.Generator(np.random.PCG64())
        try:
            g.bit_generator.state = state
        except (TypeError, ValueError, KeyError) as e:
            raise CodecError(f"malformed generator state ({e})") from None
        return g
    if tag == "obj" and type(body) is list and len(body) == 2:
        cls = resolve(body[0])
        if type(cls) is not type:
            raise CodecError(f"{body[0]!r} is not a course class")
        state = decode(body[1], hook, depth + 1)
        if type(state) is not dict or not all(type(k) is str for k in state):
            raise CodecError("malformed object state")
        obj = cls.__new__(cls)
        obj.__dict__.update(state)
        return obj
    if hook is not None:
        return hook(tag, body)
    raise CodecError(f"cannot receive a {tag!r}")


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


def plain_hook(x):
    """For the state of an argument: course functions by name, course objects by state, nothing else."""
    if type(x) in PLAIN:
        return None
    name = _course_name(x)
    if name is not None:
        return {"fn": name}
    return course_object(x, plain_hook)


def update_in_place(orig, new):
    """Make `orig` hold what `new` holds (what the other side's copy of an argument became: a rng drawn from,
    an array filled in, a scripted stub that counted its calls)."""
    if type(orig) is np.ndarray and type(new) is np.ndarray and new.shape == orig.shape and orig.flags.writeable:
        orig[...] = new
    elif type(orig) is list and type(new) is list:
        orig[:] = new
    elif (type(orig) is dict and type(new) is dict) or (type(orig) is set and type(new) is set):
        orig.clear()
        orig.update(new)
    elif type(orig) is np.random.Generator and type(new) is np.random.Generator:
        orig.bit_generator.state = new.bit_generator.state
    elif type(orig) is type(new) and course_object(orig, None) is not None:
        vars(orig).clear()
        vars(orig).update(vars(new))


def _same_plain_list(x, known):
    """Is x a list still equal to what was last sent of it, compared natively (no encoding)? Only a list of
    JSON's own values and such lists encodes to itself, so only for one can this say yes: 08's tests hand
    hundreds of contexts of thousands of tokens to a function that calls the target back once per context,
    and encoding them at every crossing cost 0.3 s (393 CPU s against 17 for the notebook). Values equal but
    of another type (1 for 1.0, a tuple for a list) are not seen as a change."""
    if type(x) is not list or type(known) is not list:
        return False
    try:
        return bool(x == known)
    except Exception:  # an array inside: compared by encoding, as before
        return False


class Shared:
    """The arguments of one call, as both sides hold them: what each last knew of the mutable ones (their
    encoded state), so that a change on one side is sent to the other at every crossing, and only then."""

    def __init__(self, objects, known, hook=plain_hook):
        self.objects, self.known, self.hook = objects, known, hook  # hook: plain_hook, or one naming lent dicts

    def changes(self):
        out = {}
        for i, x in enumerate(self.objects):
            if mutable(x):
                if _same_plain_list(x, self.known[i]):
                    continue
                now = encode(x, self.hook)
                if now != self.known[i]:
                    out[str(i)] = self.known[i] = now
        return out

    def apply(self, changes, dec_hook):
        for i, j in (changes.items() if type(changes) is dict else ()):
            try:
                k = int(i)
                if 0 <= k < len(self.objects):
                    update_in_place(self.objects[k], decode(j, dec_hook))
                    self.known[k] = j
            except (CodecError, ValueError, TypeError, KeyError, IndexError):
                pass


# ----------------------------------------------------------------------------- the agent, in the kernel

MAX_PRINTS = 100_000  # characters of the student's prints kept per message to the judge


class Prints(io.TextIOBase):
    """sys.stdout or sys.stderr while an exercise runs: what it prints goes to the judge with the answer (in
    order, in the message that follows it), not to the kernel's own output."""

    def __init__(self, name, sink):
        self.name, self.sink = name, sink

    def writable(self):
        return True

    def write(self, text):
        if type(text) is not str:
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if sum(len(t) for _, t in self.sink) < MAX_PRINTS:
            if self.sink and self.sink[-1][0] == self.name:
                self.sink[-1][1] += text[:MAX_PRINTS]
            else:
                self.sink.append([self.name, text[:MAX_PRINTS]])
        return len(text)


class Callback:
    """A judge's function (a lambda or helper of a test), called back over the judge's socket; it never runs
    here."""

    def __init__(self, agent, cid):
        self._agent, self._cid = agent, cid

    def __call__(self, *args, **kwargs):
        return self._agent.callback(self._cid, args, kwargs)


class Remote:
    """An object of the judge's used here by reference (an object of a class a test defined, or what one of
    its methods returns that is not plain data: a KV cache its model made): nothing of it is here. A public
    attribute read or method call is a callback the judge answers; setting or deleting an attribute is refused
    (the judge has no message for it either)."""

    __slots__ = ("_agent", "_rid", "_methods")

    def __init__(self, agent, rid, methods):
        object.__setattr__(self, "_agent", agent)
        object.__setattr__(self, "_rid", rid)
        object.__setattr__(self, "_methods", frozenset(methods))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(f"{name!r}: only the public attributes of the grader's objects can be read")
        agent, rid = self._agent, self._rid
        if name in self._methods:
            def method(*args, **kwargs):
                return agent.callback(["call", rid, name], args, kwargs)
            method.__name__ = method.__qualname__ = name
            return method
        return agent.callback(["get", rid, name], (), {})

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot set {name!r}: the object is the grader's (read its attributes, call its methods)")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete {name!r}: the object is the grader's")

    def __repr__(self):
        return f"<the grader's object #{self._rid}>"


class Agent:
    """Serves the judge over a Unix socket of its own (listen, then serve once per test cell): a line of JSON
    each way. The judge's lines are {"n": request number, "kind": call/swap/unswap/stop/answer, "body": ...};
    the agent's are {"n": ..., "done": ...} or, while an exercise runs, {"n": ..., "cb": ...} (a callback, whose
    answer is the judge's next line; "cb" is ["get" or "call", id, name] for a Remote's attribute or method),
    each with what the exercise printed since the last one ("out")."""

    def __init__(self, namespace):
        self.ns = namespace
        self.args, self.saved, self.shared = [], [], None
        self.held, self.lent = {}, {}  # handle -> the dict as received; id(copy lent to this call) -> (copy, handle)
        self.listener = self.conn = self.reader = None
        self.n, self.prints = None, []
        self.remotes = {}  # the current call's Remotes, by id: the same judge's object is the same stub

    # the socket
    def listen(self, path):
        import os
        import socket

        try:
            os.unlink(path)
        except OSError:
            pass
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(1)

    def _read(self):
        if self.conn is None:
            self.conn, _ = self.listener.accept()
            self.reader = self.conn.makefile("rb")
        line = self.reader.readline()
        if not line:
            raise EOFError("the judge hung up")
        msg = json.loads(line)
        return msg if type(msg) is dict else {}

    def _write(self, msg):
        msg["n"] = self.n
        if self.prints:
            msg["out"], self.prints = self.prints, []
        self.conn.sendall(json.dumps(msg, allow_nan=True, separators=(",", ":")).encode("ascii") + b"\n")

    # refs and names, on this side
    def _enc_hook(self, x):
        for i, a in enumerate(self.args):
            if x is a:
                return {"ref": i}
        if type(x) in PLAIN:
            return None
        if type(x) is Callback:
            return {"cb": x._cid}
        if type(x) is Remote:
            return {"rm": x._rid}
        name = _course_name(x)
        if name is not None:
            return {"fn": name}
        for k, v in self.ns.items():  # an exercise handed on (a function of the notebook's)
            if v is x and callable(x) and type(k) is str and not k.startswith("_"):
                return {"kfn": k}
        return course_object(x, self._enc_hook)

    def _dec_hook(self, tag, body):
        if tag == "ref" and type(body) is int and 0 <= body < len(self.args):
            return self.args[body]
        if tag == "fn":
            return resolve(body)
        if tag == "kfn" and type(body) is str:
            return self.ns[body] if body in self.ns else _missing(body)
        if tag == "cb" and type(body) is int:
            return Callback(self, body)
        if tag == "keep" and type(body) is list and len(body) == 2 and type(body[0]) is int:
            value = decode(body[1], self._dec_hook)
            if type(value) is not dict:
                raise CodecError("only a dict is held")
            self.held[body[0]] = value
            return self._lend(body[0])
        if tag == "held" and type(body) is int:
            if body not in self.held:
                raise Missing(f"no value held as {body}")
            return self._lend(body)
        if tag == "rm" and type(body) is list and len(body) == 2 and type(body[0]) is int \
                and type(body[1]) is list and all(type(m) is str for m in body[1]):
            if body[0] not in self.remotes:
                self.remotes[body[0]] = Remote(self, body[0], body[1])
            return self.remotes[body[0]]
        raise CodecError(f"cannot receive a {tag!r}")

    def _lend(self, handle):
        copy = fresh(self.held[handle])
        self.lent[id(copy)] = (copy, handle)
        return copy

    def _shared_hook(self, x):
        """plain_hook, with a lent copy named by its handle: what was lent is not compared or sent back."""
        entry = self.lent.get(id(x))
        if entry is not None and entry[0] is x:
            return {"held": entry[1]}
        return plain_hook(x)

    def callback(self, cid, args, kwargs):
        self._write({"cb": cid, "args": encode(list(args), self._enc_hook),
                     "kwargs": encode(dict(kwargs), self._enc_hook),
                     "sync": self.shared.changes() if self.shared else {}})
        while True:  # the answer to this request's callback (a line left from a stopped request is passed over)
            msg = self._read()
            if msg.get("kind") == "answer" and msg.get("n") == self.n:
                break
        answer = msg.get("body")
        if type(answer) is not dict:
            raise RuntimeError("the judge sent a malformed answer")
        if self.shared:
            self.shared.apply(answer.get("sync"), self._dec_hook)
        if "exc" in answer:
            base, name, text = answer["exc"]
            cls = getattr(builtins, base, None)
            raise (cls if isinstance(cls, type) and issubclass(cls, Exception) else RuntimeError)(text)
        return decode(answer["ok"], self._dec_hook)

    def serve(self):
        """Answer the judge's requests until it says stop."""
        while True:
            req = self._read()
            kind = req.get("kind")
            if kind == "stop":
                return
            if kind not in ("call", "swap", "unswap"):
                continue  # an answer to a callback of a request that was stopped
            self.n, self.prints = req.get("n"), []
            out = {}
            try:
                if kind == "call":
                    out = self.call(req.get("body"))
                elif kind == "swap":
                    self.swap(req.get("body"))
                else:
                    self.unswap()
            except Exception as e:
                out = {"exc": error_of(e)}
            self._write({"done": out})

    def call(self, req):
        """Run one exercise on the judge's arguments: its result (or error) and the arguments it changed."""
        import contextlib

        self.args, self.shared, self.lent, self.remotes = [], None, {}, {}
        out = {}
        try:
            raw = req["args"]
            args = [decode(a, self._dec_hook) for a in raw]
            self.args = list(args)
            kwargs = {k: decode(v, self._dec_hook) for k, v in req["kwargs"].items()}
            self.args += list(kwargs.values())
            known = list(raw) + list(req["kwargs"].values())
            if self.lent:  # what the judge sent as `keep` is known here by its handle, as the judge knows it
                known = [encode(a, self._shared_hook) if mutable(a) else j for a, j in zip(self.args, known)]
            self.shared = Shared(self.args, known, self._shared_hook)
            fn = self.ns[req["name"]] if req["name"] in self.ns else _missing(req["name"])
            with contextlib.redirect_stdout(Prints("stdout", self.prints)), \
                    contextlib.redirect_stderr(Prints("stderr", self.prints)):
                result = fn(*args, **kwargs)
            out["ok"] = encode(result, self._enc_hook)
        except Missing:  # before the student's function ran: the judge sends the values again
            self.args, self.shared, self.lent = [], None, {}
            return {"missing": True}
        except BaseException as e:  # the student's error, to be raised again in the judge
            out["exc"] = error_of(e)
        try:
            out["mut"] = self.shared.changes() if self.shared else {}
        except BaseException:
            pass
        self.args, self.shared, self.lent = [], None, {}
        return out

    def swap(self, names):
        """Bind exercise names to stand-ins (the judge's `alone`), remembering what was there."""
        saved = {}
        for k, v in names.items():
            saved[k] = self.ns.get(k, _MISSING)
            self.ns[k] = decode(v, self._dec_hook)
        self.saved.append(saved)

    def unswap(self):
        if self.saved:
            for k, v in self.saved.pop().items():
                if v is _MISSING:
                    self.ns.pop(k, None)
                else:
                    self.ns[k] = v


_MISSING = object()


def _missing(name):
    raise NameError(f"name {name!r} is not defined")


def install(namespace):
    return Agent(namespace)
