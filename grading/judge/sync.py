"""The arguments of one call as both sides hold them (grading/judge/): what each side last knew of the mutable ones,
so that a change one side makes reaches the other at a crossing, and only then.

Runs on both sides, as codec.py does: imported by the judge, and sent as text to the kernel after codec.py's, into
the same module (execute.BOOT), where agent.py's text runs after it.

A crossing (a callback) compares the arguments only once this call has handed one of them to the judge's code (a
{"ref"} in a callback's arguments: Shared.exposed, set on both sides). Before that the judge's code holds none of
the kernel's objects, so there is nothing to tell either side: 08's shortcut_tv calls the target back 2,136 times
with 4,000 contexts of thousands of tokens among its arguments, and comparing them at each callback, on both sides,
was most of what judging it cost. The end of a call always compares (its "mut").

Once exposed, an argument of plain data is compared natively with a copy of what was last sent of it (Seen), and
encoded only if that differs: 07's best_gain calls its `step` back about 25,000 times with three hardware dicts
among its arguments, and encoding them at each crossing, on both sides, was two thirds of what judging it cost.
"""
import numpy as np

try:
    from .codec import JSON_SCALARS, KINDS, CodecError, course_object, decode, encode, fresh, full_name, mutable, plain_hook
    from .registry import OUTPUTS
except ImportError:  # in the kernel: registry.py's and codec.py's text ran first, in this module's own namespace
    pass


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


def same_plain_list(x, known):
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


class NotPlain(Exception):
    pass


def seen(x, hook):
    """A copy of x that shares nothing mutable with it, for `unchanged`; NotPlain if x holds anything but JSON's
    values, lists, tuples, dicts and numeric arrays, or anything the side's hook names (a lent dict, a course
    object): those are encoded at every crossing, as before."""
    t = type(x)
    if t in JSON_SCALARS:
        return x
    if hook(x) is not None:
        raise NotPlain
    if t is list or t is tuple:
        return t(seen(v, hook) for v in x)
    if t is dict:
        return {seen(k, hook): seen(v, hook) for k, v in x.items()}
    if t is np.ndarray and x.dtype.kind in KINDS and x.dtype.fields is None:
        return x.copy()
    raise NotPlain


def unchanged(x, was):
    """Is x exactly what `seen` copied: the same types throughout, a dict's keys in the same order, equal values,
    arrays to their bytes? Then it encodes as it did. Floats compare as the encoded values were compared before
    (0.0 is -0.0; a NaN differs, and is encoded again)."""
    t = type(x)
    if t is not type(was):
        return False
    if t in JSON_SCALARS:
        return x == was
    if t is dict:
        return len(x) == len(was) and unchanged(list(x), list(was)) and unchanged(list(x.values()), list(was.values()))
    if t is list or t is tuple:
        kinds = list(map(type, x))
        if len(x) != len(was) or kinds != list(map(type, was)):
            return False
        if set(kinds) <= JSON_SCALARS:  # compared in C: 07's hardware dicts are flat
            return x == was
        return all(map(unchanged, x, was))
    if t is np.ndarray:
        return x.dtype == was.dtype and x.shape == was.shape and x.tobytes() == was.tobytes()
    return False


def private_copy(x):
    """A copy of an argument the judge can let the kernel's changes into, sharing nothing mutable with the
    test's own object."""
    if type(x) is np.random.Generator:
        g = np.random.Generator(type(x.bit_generator)())
        g.bit_generator.state = x.bit_generator.state
        return g
    if type(x) in (list, dict, set, np.ndarray):
        return fresh(x) if type(x) is not set else set(x)
    obj = type(x).__new__(type(x))
    obj.__dict__.update(fresh(vars(x)))
    return obj


class Shared:
    """The arguments of one call, as both sides hold them: what each last knew of the mutable ones (their
    encoded state), so that a change on one side is sent to the other at every crossing, and only then.

    On the judge's side (private=True) a change the kernel reports goes into a private copy of the argument,
    made at its first change, never into the test's own object: `objects` then holds the copy (an argument
    handed back, or to a callback, is the copy), `tests` the test's objects, which stay as the test made
    them (its later expected values are computed from pristine inputs); the judge copies an argument back
    only where the test declared it an output (speclab.plumbing.isolate.outputs)."""

    def __init__(self, objects, known, hook=plain_hook, private=False):
        self.objects, self.known, self.hook = objects, known, hook  # hook: plain_hook, or one naming lent dicts
        self.tests, self.private, self.copied = list(objects), private, set()
        self.seen = {}  # position -> a copy of the argument as `known` holds it (`seen`), where it is plain data
        self.exposed = False  # has a callback of this call been handed one of them (a {"ref"})? Set by each side

    def sync(self):
        """changes() at a callback: none while the judge's code holds none of the kernel's objects."""
        return self.changes() if self.exposed else {}

    def changes(self):
        out = {}
        for i, x in enumerate(self.objects):
            if not mutable(x) or same_plain_list(x, self.known[i]) \
                    or (i in self.seen and unchanged(x, self.seen[i])):
                continue
            now = encode(x, self.hook)
            if now != self.known[i]:
                out[str(i)] = self.known[i] = now
            try:
                self.seen[i] = seen(x, self.hook)
            except (NotPlain, RecursionError):
                self.seen.pop(i, None)
        return out

    def apply(self, changes, dec_hook):
        for i, j in (changes.items() if type(changes) is dict else ()):
            try:
                k = int(i)
                if 0 <= k < len(self.objects) and mutable(self.objects[k]):
                    new = decode(j, dec_hook)
                    if self.private and k not in self.copied:
                        self.objects[k] = private_copy(self.objects[k])
                        self.copied.add(k)
                    update_in_place(self.objects[k], new)
                    self.known[k] = j
                    self.seen.pop(k, None)  # what the other side made of it: compared by encoding next time
            except (CodecError, ValueError, TypeError, KeyError, IndexError):
                pass

    def copy_back(self, declared):
        """Into each test's object declared an output, what the kernel made of its copy; into a course object,
        the fields its class declares outputs (OUTPUTS: a ScriptedRNG's count of calls, never its uniforms)."""
        for k in sorted(self.copied):
            test, copy = self.tests[k], self.objects[k]
            if declared(test) or type(test) is np.random.Generator:  # a generator drawn from moves on
                update_in_place(test, copy)
            elif type(test) is type(copy) and full_name(type(test)) in OUTPUTS:
                for field in OUTPUTS[full_name(type(test))]:
                    vars(test)[field] = fresh(vars(copy)[field])
