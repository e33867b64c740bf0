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
