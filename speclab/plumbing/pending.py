"""A figure or table that needs an unsolved exercise says so in one line.

    with needs("Exercise C (one_token_distribution)"):
        dist = one_token_distribution(p, q, "correct")   # compute first: NotImplementedError while unsolved
        fig, ax = plt.subplots()                          # then draw: never reached, so no empty axes
        ...

In a fresh student copy the block stops at the first unsolved exercise and prints one line
naming it, instead of a traceback under a blank figure. Any other error is raised as usual.

Every notebook names the parts in one form, as its headings title them: "Exercise C (one_token_distribution)",
or "Step 3 (drift)" in a break-it of steps; several joined by commas and a final "and", listing every
exercise the block runs, directly or through another one:

    with needs("Exercise A (tv_distance), Exercise B (verify_round) and Exercise C (speculative_joint)"):

A widget or demo that should work before the learner's exercise does takes the learner's function through
`learner_first(learner, course)`: the learner's answer once it is solved, the course's until then. In a kernel
that grades the notebook, the course's own raises NotImplementedError too (grading/kernels/hidden.py), so
there the block prints needs' line until the learner's is solved.
"""
import functools
from contextlib import contextmanager


def unsolved(exercise):
    """The one line a block (or a widget: speclab.views.widgets.live) shows while `exercise` is unsolved."""
    return f"Solve {exercise} first: this cell shows its results."


@contextmanager
def needs(exercise):
    """Run the block; if an exercise it calls is still unsolved, print one line naming `exercise`."""
    try:
        yield
    except NotImplementedError:
        print(unsolved(exercise))


def learner_first(learner, course):
    """`learner` where it answers, `course` where it still raises NotImplementedError (an unsolved exercise)."""
    @functools.wraps(course)
    def call(*args, **kwargs):
        try:
            return learner(*args, **kwargs)
        except NotImplementedError:
            return course(*args, **kwargs)
    return call


def finished(results, keys):
    """Raise NotImplementedError unless `results` holds every key: a cell that reads what an earlier cell filled
    prints needs' line too where that cell stopped at an unsolved exercise (a graded kernel, with no course's
    function to stand in)."""
    missing = [key for key in keys if key not in results]
    if missing:
        raise NotImplementedError(f"not computed: {missing}")
