"""Grade each exercise on its own: a test block that borrows the course's version of another exercise.

A later exercise may call an earlier one (speculative_sample calls residual). Without care,
one slip in the earlier exercise would also fail every later test that touches it. Inside

    with alone(globals(), residual=ref.residual):
        ...checks of speculative_sample...

the notebook's name `residual` is bound to the reference version, and the student's own is
put back afterwards, even when a check fails.
"""
from contextlib import contextmanager

_MISSING = object()


@contextmanager
def alone(namespace, **stand_ins):
    """Bind names in `namespace` (a notebook's globals()) to stand-ins for the block, then restore them."""
    saved = {name: namespace.get(name, _MISSING) for name in stand_ins}
    namespace.update(stand_ins)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is _MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = value


_OUTPUTS = []  # the objects `outputs` blocks declare, innermost last


@contextmanager
def outputs(*objects):
    """Declare, for the calls inside the block, arguments an exercise is meant to change in place and that
    the test reads back (a generator drawn from, a ScriptedRNG whose calls it counts, an array filled in).

    Where the tests run in the student's kernel this changes nothing. Where the grader runs them (its
    judge), an exercise's changes to its arguments reach a copy of each, never the test's own objects,
    unless declared here: so a function that writes into its inputs cannot change the values a test
    computes its expectations from."""
    _OUTPUTS.append(objects)
    try:
        yield objects[0] if len(objects) == 1 else objects
    finally:
        _OUTPUTS.pop()


def declared(x):
    """Is x declared an output by an enclosing `outputs` block?"""
    return any(x is o for block in _OUTPUTS for o in block)
