"""Notebook 04's experiment: 60,000 trials, k = 4, first two tokens; the plain loop vs the vectorised simulator.

Both run here, one after the other in this process, on the same rules: the loop is
speclab.rules.speculative.speculative_joint (one rng.random() per decision, the seed
page's stream), the vectorised one speclab.decoding.simulate.first_two_frequencies. Each is timed
by wall clock and by this process's CPU time (time.process_time): on a shared
machine the CPU time is the fairer ratio, since other people's work stretches the
wall clock. The vectorised time is the best of 3 calls. The TV columns show both
land on the same numbers (the loop's exactly the seed page's, the vectorised within
sampling noise of the exact value).
"""
import time

import numpy as np

from speclab import draft, target
from speclab.rules import exact
from speclab.decoding import simulate
from speclab.rules.speculative import speculative_joint, target_joint, tv_distance

TRIALS, K = 60_000, 4
# (label, draft, k, rule, seed): the seed page's five runs; the floor drafts with the target itself.
RUNS = [("correct", "good", K, "correct", 10), ("greedy", "good", K, "greedy", 10),
        ("no_resample", "good", K, "no_resample", 10), ("continue", "good", K, "continue", 10),
        ("floor (Q = P, k = 1)", None, 1, "correct", 11)]


def _timed(f):
    wall, cpu = time.perf_counter(), time.process_time()
    out = f()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def bench():
    P = target()
    ref = target_joint(P, 0)
    totals = np.zeros(4)   # loop wall, loop cpu, vectorised wall, vectorised cpu
    for label, kind, k, rule, seed in RUNS:
        Q = P if kind is None else draft(kind)
        J_loop, loop_wall, loop_cpu = _timed(
            lambda: speculative_joint(P, Q, 0, k, TRIALS, np.random.default_rng(seed), rule))
        vec = [_timed(lambda: simulate.first_two_frequencies(P, Q, 0, k, TRIALS, np.random.default_rng(seed), rule))
               for _ in range(3)]
        J_vec, vec_wall, vec_cpu = vec[0][0], min(v[1] for v in vec), min(v[2] for v in vec)
        totals += (loop_wall, loop_cpu, vec_wall, vec_cpu)
        exact_tv = tv_distance(exact.first_two_probabilities(P, Q, 0, k, rule), ref)
        yield (f"{label}: TV loop / vectorised / exact",
               f"{tv_distance(J_loop, ref):.4f} / {tv_distance(J_vec, ref):.4f} / {exact_tv:.4f}")
        yield (f"{label}: loop vs vectorised, wall",
               f"{loop_wall:6.2f} s vs {vec_wall * 1e3:5.1f} ms = {loop_wall / vec_wall:4.0f}x")
        yield (f"{label}: loop vs vectorised, CPU",
               f"{loop_cpu:6.2f} s vs {vec_cpu * 1e3:5.1f} ms = {loop_cpu / vec_cpu:4.0f}x")
    lw, lc, vw, vc = totals
    yield "all five runs, wall", f"{lw:6.2f} s vs {vw * 1e3:5.1f} ms = {lw / vw:4.0f}x"
    yield "all five runs, CPU", f"{lc:6.2f} s vs {vc * 1e3:5.1f} ms = {lc / vc:4.0f}x"
