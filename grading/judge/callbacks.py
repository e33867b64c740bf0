"""The judge's side of a callback: the kernel's student code calling back into a course function or a test's
object. Which course functions it may name (course_function), the call it asks for (_call_of), and the answer
the judge sends back (_answer), with the arguments the call changed (_given_back)."""
import types

from . import codec
from .codec import FUNCTIONS, CodecError, decode, encode, full_name, plain_hook
from .outcome import Late
from .sync import same_plain_list


def course_function(name):
    """The course function FUNCTIONS names `name`: its module imported, one attribute read, checked to be a plain
    function defined there under that name; anything else, a CodecError."""
    import importlib

    if type(name) is not str or name not in FUNCTIONS:
        raise CodecError(f"{str(name)[:100]!r} is not a course function the grader accepts")
    module, _, qual = name.partition(":")
    fn = getattr(importlib.import_module(module), qual, None)
    if type(fn) is not types.FunctionType or full_name(fn) != name:
        raise CodecError(f"{name!r} is not a course function the grader accepts")
    return fn


def _call_of(msg, dec):
    """The arguments of a call the kernel asks the judge to make: (list, dict of str keys), or CodecError."""
    args, kwargs = decode(msg.get("args"), dec), decode(msg.get("kwargs"), dec)
    if type(args) is not list or type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
        raise CodecError("malformed call")
    return args, kwargs


def _answer(run, hook, shared, msg, handed):
    """The judge's answer to a callback: run()'s result encoded with hook, or the error it raised (Late goes
    on: the cell stops), with the call's arguments' changes since the last crossing, and what the judge's
    function did to the kernel's own objects it was handed by value (`back`: a KV cache the course's
    verify_block filled, called back from 10's loop)."""
    try:
        answer = {"ok": encode(run(), hook)}
    except Late:
        raise
    except BaseException as e:
        answer = {"exc": codec.error_of(e)}
    try:
        answer["sync"] = shared.sync()
        answer["back"] = _given_back(msg.get("args"), handed[0]) if handed else {}
    except CodecError:
        pass
    return answer


def _given_back(sent, args):
    """{position: new state} of the positional arguments the kernel sent by value that the call changed."""
    out = {}
    for i, (j, x) in enumerate(zip(sent if type(sent) is list else (), args)):
        if codec.mutable(x) and not (type(j) is dict and set(j) & {"ref", "held", "keep", "rm", "cb"}) \
                and not same_plain_list(x, j):  # 08's contexts: compared as they are, not encoded again
            now = encode(x, plain_hook)
            if now != j:
                out[str(i)] = now
    return out
