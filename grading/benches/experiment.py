"""Notebook 04's experiment: 60,000 trials, k = 4, first two tokens; the plain loop vs the vectorised simulator.

Both run here, one after the other in this process, on the same rules: the loop is
speclab.speculative.speculative_joint (one rng.random() per decision, the seed
page's stream), the vectorised one speclab.simulate.first_two_joint. The ratio is
of times measured side by side; the TV columns show both land on the same numbers
(the loop's exactly the seed page's, the vectorised within the sampling noise).
"""
import time

import numpy as np

from speclab import draft, exact, simulate, target
from speclab.speculative import speculative_joint, target_joint, tv_distance

TRIALS, K = 60_000, 4
# (label, draft, k, rule, seed): the seed page's five runs; the floor drafts with the target itself.
RUNS = [("correct", "good", K, "correct", 10), ("greedy", "good", K, "greedy", 10),
        ("no_resample", "good", K, "no_resample", 10), ("continue", "good", K, "continue", 10),
        ("floor (Q = P, k = 1)", None, 1, "correct", 11)]


def _timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def bench():
    P = target()
    ref = target_joint(P, 0)
    loop_total = vec_total = 0.0
    for label, kind, k, rule, seed in RUNS:
        Q = P if kind is None else draft(kind)
        J_loop, t_loop = _timed(lambda: speculative_joint(P, Q, 0, k, TRIALS, np.random.default_rng(seed), rule))
        J_vec, t_vec = _timed(lambda: simulate.first_two_joint(P, Q, 0, k, TRIALS, np.random.default_rng(seed), rule))
        best_vec = min(t_vec, min(_timed(lambda: simulate.first_two_joint(
            P, Q, 0, k, TRIALS, np.random.default_rng(seed), rule))[1] for _ in range(2)))
        exact_tv = tv_distance(exact.first_two_joint(P, Q, 0, k, rule), ref)
        loop_total, vec_total = loop_total + t_loop, vec_total + t_vec
        yield (f"{label}: TV loop / vectorised / exact",
               f"{tv_distance(J_loop, ref):.4f} / {tv_distance(J_vec, ref):.4f} / {exact_tv:.4f}")
        yield (f"{label}: loop, vectorised (first call, best of 3), ratio",
               f"{t_loop:6.2f} s, {t_vec * 1e3:5.1f} ms ({best_vec * 1e3:5.1f} ms), {t_loop / t_vec:5.0f}x")
    yield "all five runs: loop, vectorised, ratio", f"{loop_total:6.2f} s, {vec_total * 1e3:5.1f} ms, {loop_total / vec_total:5.0f}x"
