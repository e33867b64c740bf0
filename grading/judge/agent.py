"""The small agent the judge runs in the student's kernel: it serves the judge's requests over a Unix socket.

Sent as text to the sandboxed kernel after codec.py's and sync.py's, into the same module (see execute.BOOT); there `install`
binds it as `__speclab_judge__`. It is the student's: student code can call it, answer for it or write on its
socket, so the judge trusts nothing it sends (codec.py's decode, and the judge's bounds on what it reads), and it
holds nothing worth reaching: no resolver of names, no course function (a function of the judge's is a
Callback, which runs in the judge), only what the judge sent for the current call.
"""
import builtins
import io
import json

import numpy as np

try:
    from .codec import (FUNCTIONS, KINDS, PLAIN, CodecError, Missing, Seal, course_object, decode, encode, error_of,
                        fresh, full_name, mutable, plain_hook, table_from)
    from .sync import Shared, update_in_place
except ImportError:  # in the kernel: codec.py's and sync.py's text ran first, in this module's own namespace
    pass

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
        self.held, self.lent = {}, {}  # handle -> (the dict as received, its Seal); id(dict lent to this call) -> (it, handle)
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
        msg.pop("n", None)
        if self.prints:
            msg["out"], self.prints = self.prints, []
        # "n" first: the judge reads a line's number before it parses anything (a line for no request of its
        # own is counted, never parsed)
        line = json.dumps({"n": self.n, **msg}, allow_nan=True, separators=(",", ":"))
        self.conn.sendall(line.encode("ascii") + b"\n")

    # refs and names, on this side
    def _enc_hook(self, x):
        for i, a in enumerate(self.args):
            if x is a:
                if self.shared is not None:
                    self.shared.exposed = True  # the judge's code holds it now: the next crossings compare
                return {"ref": i}
        if type(x) in PLAIN:
            return None
        if type(x) is Callback:
            return {"cb": x._cid}
        if type(x) is Remote:
            return {"rm": x._rid}
        if callable(x) and full_name(x) in FUNCTIONS:  # a name only: the judge looks it up in its own table
            return {"fn": full_name(x)}
        for k, v in self.ns.items():  # an exercise handed on (a function of the notebook's)
            if v is x and callable(x) and type(k) is str and not k.startswith("_"):
                return {"kfn": k}
        return course_object(x, self._enc_hook)

    def _dec_hook(self, tag, body):
        if tag == "ref" and type(body) is int and 0 <= body < len(self.args):
            return self.args[body]
        if tag == "kfn" and type(body) is str:
            return self.ns[body] if body in self.ns else _missing(body)
        if tag == "cb" and type(body) is int:
            return Callback(self, body)
        if tag == "keep" and type(body) is list and len(body) == 2 and type(body[0]) is int:
            if type(body[1]) is dict and list(body[1]) == ["rows"]:  # a count table: its rows one block already
                value = table_from(body[1]["rows"])
            else:
                value = decode(body[1], self._dec_hook)
                if type(value) is not dict:
                    raise CodecError("only a dict is held")
                value = as_block(value)
            self.held[body[0]] = (value, Seal(value))
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
        """The held dict itself, restored first if a call wrote into it since it was sealed; a fresh copy where it
        cannot be sealed by its block, or where this call was already lent it (two arguments, two objects)."""
        value, seal = self.held[handle]
        if seal.block is None or any(h == handle for _, h in self.lent.values()):
            value = fresh(value)
        elif not seal.intact(value):
            value = dict(zip(seal.keys, seal.pristine.copy()))
            self.held[handle] = (value, Seal(value))
        self.lent[id(value)] = (value, handle)
        return value

    def _shared_hook(self, x):
        """plain_hook, with a lent copy named by its handle: what was lent is not compared or sent back."""
        entry = self.lent.get(id(x))
        if entry is not None and entry[0] is x:
            return {"held": entry[1]}
        return plain_hook(x)

    def callback(self, cid, args, kwargs):
        self._write({"cb": cid, "args": encode(list(args), self._enc_hook),
                     "kwargs": encode(dict(kwargs), self._enc_hook),
                     "sync": self.shared.sync() if self.shared else {}})  # after the args: a ref exposes
        while True:  # the answer to this request's callback (a line left from a stopped request is passed over)
            msg = self._read()
            if msg.get("kind") == "answer" and msg.get("n") == self.n:
                break
        answer = msg.get("body")
        if type(answer) is not dict:
            raise RuntimeError("the judge sent a malformed answer")
        if self.shared:
            self.shared.apply(answer.get("sync"), self._dec_hook)
        back = answer.get("back")
        for i, j in (back.items() if type(back) is dict else ()):  # what the judge's function did to them
            if type(i) is str and i.isdigit() and int(i) < len(args):
                update_in_place(args[int(i)], decode(j, self._dec_hook))
        if "exc" in answer:
            base, name, text = answer["exc"]
            cls = getattr(builtins, base, None)
            raise (cls if isinstance(cls, type) and issubclass(cls, Exception) else RuntimeError)(text)
        return decode(answer["ok"], self._dec_hook)

    def serve(self, cpu=None):
        """Answer the judge's requests until it says stop, on core `cpu` meanwhile if one is named (the judge's:
        grading/judge/colocate.py), then on the cores this thread had."""
        import os

        saved = None
        if type(cpu) is int:
            try:
                saved = os.sched_getaffinity(0)
                os.sched_setaffinity(0, {cpu})
            except (OSError, ValueError, OverflowError):
                saved = None
        try:
            self._serve()
        finally:
            if saved is not None:
                try:
                    os.sched_setaffinity(0, saved)
                except OSError:
                    pass

    def _serve(self):
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


def as_block(table):
    """A received dict whose values are arrays of one shape and dtype, rebuilt with them as the rows of one array
    (so that its Seal is a block: checked in milliseconds, where a copy per call took tens); else as it is."""
    values = list(table.values())
    if not values or type(values[0]) is not np.ndarray or values[0].dtype.kind not in KINDS:
        return table
    shape, dtype = values[0].shape, values[0].dtype
    if not all(type(v) is np.ndarray and v.shape == shape and v.dtype == dtype for v in values):
        return table
    return dict(zip(table, np.stack(values)))


_MISSING = object()


def _missing(name):
    raise NameError(f"name {name!r} is not defined")


def install(namespace):
    return Agent(namespace)
