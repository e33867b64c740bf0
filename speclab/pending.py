"""A figure or table that needs an unsolved exercise says so in one line.

    with needs("Exercise C (drift)"):
        data = [drift(...) for ...]        # compute first: raises NotImplementedError while unsolved
        fig, ax = plt.subplots()           # then draw: never reached, so no empty axes
        ...

In a fresh student copy the block stops at the first unsolved exercise and prints one line
naming it, instead of a traceback under a blank figure. Any other error is raised as usual.
"""
from contextlib import contextmanager


@contextmanager
def needs(exercise):
    """Run the block; if an exercise it calls is still unsolved, print one line naming `exercise`."""
    try:
        yield
    except NotImplementedError:
        print(f"Solve {exercise} first: this cell shows its results.")
