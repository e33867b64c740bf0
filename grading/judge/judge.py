"""The judge: runs a notebook's test cells in the grading worker, never in the student's kernel.

Its namespace is built from the SOURCE notebook's own course cells (only those the tests need: a backward
slice over names), with each exercise (a name a solution cell defines) bound to a Proxy. A proxy call
sends its arguments to the kernel by value (codec.py), runs the student's function there, and
gets back the result by value, the arguments the function changed, or the error it raised.
"""
import builtins
import contextlib
import itertools
import os

import numpy as np

from ..cells import grade_id
from . import codec, remote
from .callbacks import _answer, _call_of, course_function
from .codec import (HOLD, HOLD_ROWS, PLAIN, CodecError, Seal, count_table, course_object, decode, encode, plain_hook,
                    rows_of)
from .outcome import Dead, Late, Refused, _error, _text, append_stream
from .slicing import _parse, course_slice, exercises, is_test, lean, read_anywhere
from .sync import Shared

# ----------------------------------------------------------------------------- the proxy

class Proxy:
    """An exercise, in the judge: calling it runs the student's function in the kernel on copies."""

    def __init__(self, judge, name):
        self._judge, self._name = judge, name
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        return self._judge.call(self._name, args, kwargs)

    def __repr__(self):
        return f"<function {self._name}>"


def _raise(err):
    base, name, msg = (list(err) + ["", "", ""])[:3] if type(err) is list else ("", "", "")
    cls = getattr(builtins, base, None) if type(base) is str else None
    text = str(msg)[:2000]
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            exc = cls(text)
        except Exception:
            exc = RuntimeError(f"{name}: {text}")
    else:
        exc = RuntimeError(f"{str(name)[:100]}: {text}")
    raise exc


# ----------------------------------------------------------------------------- the judge

class Judge:
    """transport(kind, body, on_callback) sends one request to the agent serving in the kernel, hands each
    callback it asks for to on_callback (a dict; its return, a dict, is the answer), and returns the agent's
    answer (a dict, or None when none came), the kernel's prints [(stream name, text)] and the kernel's own
    error, if any; it raises Late past the cell's time."""

    def __init__(self, source_nb, transport):
        self.nb, self.transport = source_nb, transport
        self.exercises = exercises(source_nb)
        self.plan = course_slice(source_nb, self.exercises)
        self.wanted = read_anywhere(source_nb, self.plan)
        self.test_at = {grade_id(c): i for i, c in enumerate(source_nb.cells) if is_test(c)}
        self.ns = {"__name__": "__main__", "__builtins__": builtins}
        self.done = 0
        self.busy = False
        self.sink = None
        self.standing = {}  # stand-ins swapped into the kernel by `alone`, called back: {negative id: function}
        self.held = {}      # large dicts the kernel holds (codec.HOLD): id -> (the dict, its handle, its Seal)
        self.handles = self.holding = 0
        self.remotes, self.remote_ids = {}, {}  # the current call's objects the kernel holds by reference
        self._rids = itertools.count(1)  # never reused: a stub kept from an earlier call names nothing
        self._bind()

    def _bind(self):
        from speclab.plumbing import isolate

        for name in self.exercises:
            self.ns[name] = Proxy(self, name)
        if self.ns.get("alone") is isolate.alone:
            self.ns["alone"] = self.alone

    def advance(self, upto):
        """Run the planned course cells above source cell `upto`, in order, quietly (an error there is the
        course's: the names it would have bound stay unbound, as in the kernel)."""
        os.environ.setdefault("MPLBACKEND", "Agg")
        for i in range(self.done, min(upto, len(self.nb.cells))):
            if i in self.plan:
                source = self.nb.cells[i].source
                tree = _parse(source)
                if tree is None:
                    continue
                tree = lean(tree, self.wanted)
                with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
                    try:
                        exec(compile(tree, f"<course cell {i}>", "exec"), self.ns)
                    except Exception:  # Late is not one: the test cell it runs for is stopped
                        pass
                self._bind()
        self.done = max(self.done, upto)

    def run_test(self, gid, source):
        """Run one test cell here; its outputs, as nbformat outputs."""
        outputs = []
        self.sink = outputs

        class Stream:
            def __init__(self, name):
                self.name = name

            def write(self, text):
                append_stream(outputs, self.name, text)
                return len(text)

            def flush(self):
                pass

        try:
            self.advance(self.test_at.get(gid, len(self.nb.cells)))
            with contextlib.redirect_stdout(Stream("stdout")), contextlib.redirect_stderr(Stream("stderr")):
                exec(compile(source, f"<test {gid}>", "exec"), self.ns)
        except Dead as e:
            outputs.append(_error("DeadKernelError", str(e)))
        except Refused as e:
            outputs.append(_error("ProtocolError", str(e)))
        except Late as e:  # a call ran past its time: the cell stops there
            outputs.append(_error("CellTimeoutError", str(e)))
        except BaseException as e:  # the test failed (or the student's error came back through a proxy)
            outputs.append(_error(type(e).__name__, _text(e)))
        finally:
            self.sink = None
            self.busy = False
        self._bind()
        return outputs

    # the kernel, by value
    def _hook(self, callbacks, originals):
        def hook(x):
            for i, a in enumerate(originals):
                if x is a:
                    return {"ref": i}
            if type(x) is dict and callbacks is not None and (len(x) >= HOLD or (len(x) >= HOLD_ROWS and count_table(x))):
                held = self._hold(x, hook)
                if held is not None:
                    return held
            if type(x) in PLAIN or type(x) is np.random.Generator:
                return None
            if type(x) is Proxy:
                return {"kfn": x._name}
            obj = course_object(x, hook)  # a REGISTRY class's instance, by value, callable or not (a PriceTable)
            if obj is not None:
                return obj
            if callable(x) and callbacks is not None:  # a course function or model too: called back, never named
                return {"cb": self._register(callbacks, x)}
            if callbacks is not None and callbacks is not self.standing:
                return self._by_reference(x)  # a test's own object (10's counting target, stand-in cache)
            return None
        return hook

    def _hold(self, x, hook):
        """{'held': handle} for a large dict the kernel already holds as it is now (its seal intact), else
        {'keep': [handle, its value]} (sent once, held after), or None if it holds anything but plain data."""
        entry = self.held.get(id(x))
        if entry is not None and entry[0] is x and entry[2].intact(x):
            self.holding = True
            return {"held": entry[1]}
        seal = Seal(x)
        if seal.digest is None:
            return None
        self.holding = True
        self.handles += 1  # a new number for every dict sent (each kept alive in self.held, so ids stay unique)
        self.held[id(x)] = (x, self.handles, seal)
        rows = rows_of(x)  # a count table, as its entries that are not zero
        return {"keep": [self.handles, rows or {"dict": [[encode(k, hook), encode(v, hook)] for k, v in x.items()]}]}

    def _shared_hook(self, x):
        """plain_hook, with a held dict named by its handle (what the kernel lends is not compared)."""
        entry = self.held.get(id(x))
        if entry is not None and entry[0] is x:
            return {"held": entry[1]}
        return plain_hook(x)

    def _register(self, callbacks, fn):
        """A function the kernel calls back: numbered from 0 for one call's arguments, from -1 down for the
        stand-ins `alone` swaps in, which stay callable for every call made inside its block."""
        cid = -len(self.standing) - 1 if callbacks is self.standing else len(callbacks)
        callbacks[cid] = fn
        return cid

    def _dec(self, callbacks, originals, shared=None):
        def hook(tag, body):
            if tag == "ref" and type(body) is int and 0 <= body < len(originals):
                if shared is not None:
                    shared.exposed = True  # a callback holds it now: the next crossings compare
                return originals[body]
            if tag == "fn":
                return course_function(body)
            if tag == "kfn" and type(body) is str:
                return Proxy(self, body)
            if tag == "rm" and type(body) is int and body in self.remotes:
                return self.remotes[body]
            if tag == "cb" and type(body) is int and (body in callbacks or body in self.standing):
                return callbacks[body] if body in callbacks else self.standing[body]
            if tag == "held" and type(body) is int:
                for obj, handle, _ in self.held.values():
                    if handle == body:
                        return obj
            raise CodecError(f"the kernel sent a {tag!r} the judge does not accept")
        return hook

    def call(self, name, args, kwargs):
        if self.busy:
            raise RuntimeError("an exercise called from inside another exercise's callback cannot be graded")
        out = self._call(name, args, kwargs)
        if out is _MISSING:  # the kernel was restarted and holds nothing: send everything again, once
            self.held.clear()
            out = self._call(name, args, kwargs)
            if out is _MISSING:
                raise RuntimeError(f"{name} could not be called in the kernel (it lost what the judge sent)")
        return out

    def _call(self, name, args, kwargs):
        callbacks = {}
        self.holding = False  # set by _hold: an argument holds a dict the kernel keeps
        self.remotes, self.remote_ids = {}, {}
        originals = []  # no refs while the arguments are encoded: each is sent by value
        hook = self._hook(callbacks, originals)
        try:
            enc_args = [encode(a, hook) for a in args]
            enc_kwargs = {str(k): encode(v, hook) for k, v in kwargs.items()}
        except CodecError as e:
            raise TypeError(f"the grader cannot send this argument to {name}: {e}") from None
        originals[:] = list(args) + list(kwargs.values())
        known = enc_args + list(enc_kwargs.values())
        if self.holding:  # the kernel knows what it keeps by its handle, and so does this side
            known = [encode(a, self._shared_hook) if codec.mutable(a) else j for a, j in zip(originals, known)]
        shared = Shared(originals, known, self._shared_hook, private=True)  # `originals` then holds the copies
        dec = self._dec(callbacks, originals, shared)

        def on_callback(msg):
            return self._callback(msg, callbacks, originals, dec, shared)

        self.busy = True
        try:
            done, streams, error = self.transport("call", {"name": name, "args": enc_args, "kwargs": enc_kwargs},
                                                  on_callback)
        finally:
            self.busy = False
        for stream, text in streams:
            if self.sink is not None:
                append_stream(self.sink, stream, text)
        if type(done) is not dict:
            raise RuntimeError(f"{name} could not be called in the kernel" + (f" ({error})" if error else ""))
        if done.get("missing") is True:
            return _MISSING
        shared.apply(done.get("mut"), dec)
        from speclab.plumbing import isolate

        shared.copy_back(isolate.declared)
        if "exc" in done:
            _raise(done["exc"])
        try:
            return decode(done.get("ok"), dec)
        except (CodecError, ValueError, TypeError, KeyError) as e:
            raise TypeError(f"{name} returned something the grader cannot check: {e}") from None

    def _callback(self, msg, callbacks, originals, dec, shared):
        cid = msg.get("cb")
        if type(cid) is list:
            return self._remote_callback(msg, callbacks, originals, dec, shared)
        if type(cid) is not int or (cid not in callbacks and cid not in self.standing):
            return {"exc": ["RuntimeError", "RuntimeError", "no such function"]}
        fn = callbacks[cid] if cid in callbacks else self.standing[cid]
        shared.apply(msg.get("sync"), dec)

        handed = []

        def run():
            args, kwargs = _call_of(msg, dec)
            handed.append(args)
            return fn(*args, **kwargs)
        return _answer(run, self._hook(None, originals), shared, msg, handed)

    # the kernel, by reference
    def _by_reference(self, x):
        """{'rm': [id, its public methods]} for an object that stays here and is used from the kernel through a
        Remote (the same id for the same object during a call), or None if it may not (remote.remotable)."""
        if not remote.remotable(x):
            return None
        rid = self.remote_ids.get(id(x))
        if rid is None or self.remotes.get(rid) is not x:
            rid = next(self._rids)
            self.remotes[rid], self.remote_ids[id(x)] = x, rid  # held, so that its id is not reused
        return {"rm": [rid, remote.public_methods(x)]}

    def _result_hook(self, callbacks, originals):
        """How what a remote object's attribute or method gives crosses: plain data by value, an argument of the
        call as its ref, a function of ours (a bound method too) called back, any other object of ours (a course
        object included: the KV cache `new_cache` made) by reference; nothing else."""
        def hook(x):
            for i, a in enumerate(originals):
                if x is a:
                    return {"ref": i}
            if type(x) in PLAIN or type(x) is np.random.Generator:
                return None
            if type(x) is Proxy:
                return {"kfn": x._name}
            if callable(x):
                return {"cb": self._register(callbacks, x)} if remote.ours(x) else None
            return self._by_reference(x)
        return hook

    def _remote_callback(self, msg, callbacks, originals, dec, shared):
        """The kernel reads a public attribute (['get', id, name]) or calls a public method (['call', id, name])
        of an object it holds by reference; a name starting with '_' is refused, as is an id not issued for
        this call."""
        what = msg.get("cb")
        if len(what) != 3 or what[0] not in ("get", "call") or type(what[1]) is not int \
                or what[1] not in self.remotes or type(what[2]) is not str:
            return {"exc": ["RuntimeError", "RuntimeError", "no such object of the grader's"]}
        kind, obj, name = what[0], self.remotes[what[1]], what[2]
        shared.apply(msg.get("sync"), dec)

        def run():
            if not name.isidentifier() or name.startswith("_"):
                raise AttributeError(f"{name[:100]!r}: only the public attributes of the grader's objects can be read")
            if kind == "get":
                try:
                    return getattr(obj, name)
                except AttributeError:
                    raise AttributeError(f"the grader's object has no attribute {name!r}") from None
            if name not in remote.public_methods(obj):
                raise AttributeError(f"the grader's object has no method {name!r}")
            args, kwargs = _call_of(msg, dec)
            handed.append(args)
            return getattr(obj, name)(*args, **kwargs)
        handed = []
        return _answer(run, self._result_hook(callbacks, originals), shared, msg, handed)

    def alone(self, namespace, **stand_ins):
        """speclab.plumbing.isolate.alone, in the kernel too: the student's later exercise calls the stand-ins."""
        from speclab.plumbing import isolate

        kernel = {k: v for k, v in stand_ins.items() if k in self.exercises}
        return _Both(self, kernel, isolate.alone(namespace, **stand_ins))

    def swap(self, names):
        hook = self._hook(self.standing, [])  # a stand-in the test wrote is called back from the kernel
        try:
            request = {k: encode(v, hook) for k, v in names.items()}
        except CodecError:
            return False
        self.transport("swap", request, None)
        return True

    def unswap(self):
        self.transport("unswap", None, None)


_MISSING = object()


class _Both:
    def __init__(self, judge, kernel, inner):
        self.judge, self.kernel, self.inner, self.swapped = judge, kernel, inner, False

    def __enter__(self):
        if self.kernel:
            self.swapped = self.judge.swap(self.kernel)
        return self.inner.__enter__()

    def __exit__(self, *exc):
        try:
            return self.inner.__exit__(*exc)
        finally:
            if self.swapped:
                self.judge.unswap()
