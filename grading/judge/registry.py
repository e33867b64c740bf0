"""The course's types and functions that may cross between the judge and the kernel: the whole list, in one place.

Sent as text to the kernel before codec.py's (execute.BOOT), into the same module; imported by codec.py in the
judge. A name here is looked up (codec.registered_class, judge.course_function) as one attribute of one module,
checked to be the very class or function of that name: nothing else of the course, or of anything it imports, is
ever found by name.
"""


def _floats(x):
    return type(x) is list and all(type(u) is float and 0.0 <= u < 1.0 for u in x)


def _count(x):
    return type(x) is int and x >= 0


def _names(x):
    return type(x) is list and all(type(n) is str for n in x)


def _ints(x):
    return type(x) is list and all(type(n) is int for n in x)


def _seconds(x):
    import numpy as np

    return type(x) is np.ndarray and x.dtype == np.float64 and x.ndim == 3


def _contexts(x):
    # not through _ints: in the kernel codec.py's text runs after this one, in the same namespace, and has its own
    return type(x) is list and all(type(c) is list and all(type(t) is int for t in c) for c in x)


def _rows(x):
    import numpy as np

    return type(x) is np.ndarray and x.dtype == np.float64 and x.ndim == 2


def pcg64_words(x):
    """A numpy Generator's PCG64 state as it crosses: state, inc, has_uint32, uinteger, each in its range."""
    return type(x) is list and len(x) == 4 and all(type(w) is int for w in x) and 0 <= x[0] < 2**128 \
        and 0 <= x[1] < 2**128 and x[2] in (0, 1) and 0 <= x[3] < 2**32


# The course classes whose instances cross by their fields, with a check of each field: the whole list (what
# tests hand the kernel and what the kernel hands back, seen crossing when every notebook's reference solution
# was judged). Any other object of the course's stays in the judge (a Remote in the kernel) or does not cross. One
# that is callable crosses by value too: 07's PriceTable, a `step` whose prices are data, so that the kernel asks
# the judge nothing per batch; 08's ModelTable, a model's distributions on the contexts a round can reach, so that
# it asks nothing per context.
REGISTRY = {
    "speclab.rules.sampling:ScriptedRNG": {"uniforms": _floats, "calls": _count},
    "speclab.speed.prices:PriceTable": {"models": _names, "passes": _ints, "acc": lambda x: type(x) is str,
                                        "ctx": _count, "seconds": _seconds},
    "speclab.models.modeltable:ModelTable": {"window": _count, "contexts": _contexts, "probs": _rows},
}

# The fields of a course object an exercise's changes reach the test's own object through (the test reads them
# back: a ScriptedRNG counts the uniforms drawn, that is what it is for; so does a numpy Generator's state, as a
# test that calls an exercise many times on one generator needs it to move on). Any other change to an argument
# reaches only a copy, unless the test declares the argument an output (speclab.plumbing.isolate.outputs). Notebook 10's
# models and KV caches are not here: they stay in the judge and cross by reference (a Remote in the kernel, whose
# forward and truncate run on the judge's own object, so a cache fills and rolls back where the test reads it),
# and reading their weights gives the kernel a copy: an exercise that zeroes a model's head changes nothing the
# test, or the course's per-process load_model(), computes expected values with.
OUTPUTS = {"speclab.rules.sampling:ScriptedRNG": ("calls",)}

# Course functions the kernel may name (it holds them from its course cells and hands them back: 07's tests see
# step_time so); the judge looks a name up in this table only. The judge never sends a function by name: the
# kernel gets a callback, so nothing in the kernel resolves a name into the course's code.
FUNCTIONS = frozenset(
    f"speclab.{m}:{f}" for m, fs in {
        "rules.speculative": "accept_prob acceptance_rate greedy_decode speculative_greedy trusting_greedy residual "
                       "speculative_sample tv_distance verify_round",
        "views.onetoken": "swapped_accept_prob",
        "speed.hardware": "best_gain explainer_step_time forward_macs step_time weight_bytes",
        "rules.candidates": "shortcut_sample",
    }.items() for f in fs.split())
