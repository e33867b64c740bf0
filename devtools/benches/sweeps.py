"""Notebooks 05-06's sweeps: the seed page's 21 rows of 40,000 rounds, three ways.

The plain loop (speclab.decoding.sweeps.run_rounds: draft_tokens + verify_round, one
rng.random() per decision) and the same loop on Python lists with the uniforms drawn
in one block (run_rounds_fast) consume the same random stream, so they print the same
digits as the seed page; the vectorised simulator (speclab.decoding.simulate.run, 100 chains)
draws a different stream and lands within sampling noise. Times are side by side in
this process; the ratios are what to read on a shared machine.
"""
import time

import numpy as np

from speclab.speed import costs
from speclab.decoding import simulate, sweeps
from speclab.models.tables import blend, draft, table, target, temper


def _rows():
    """(label, P, Q, k, seed) for every row of the seed page's sweep tables."""
    P, other = target(), table("other2")
    rows = [(f"quality w={w:.2f}", P, blend(P, other, w), 4, 20) for w in sweeps.BLENDS]
    rows += [(f"temperature T={T}", P, temper(P, T), 4, 21) for T in sweeps.TEMPERATURES]
    rows += [(f"k sweep k={k}", P, draft("middling"), k, 30) for k in sweeps.KS]
    rows += [("break-even k=4", P, draft("middling"), 4, 40), ("poor draft k=4", P, draft("poor"), 4, 41)]
    return rows


def _timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def bench():
    rows = _rows()
    totals = {"loop": 0.0, "fast": 0.0, "vectorised": 0.0}
    worst = 0.0
    for label, P, Q, k, seed in rows:
        loop, t_loop = _timed(lambda: sweeps.run_rounds(P, Q, k, sweeps.ROUNDS, np.random.default_rng(seed)))
        fast, t_fast = _timed(lambda: sweeps.run_rounds_fast(P, Q, k, sweeps.ROUNDS, np.random.default_rng(seed)))
        vec, t_vec = _timed(lambda: simulate.run(P, Q, k, sweeps.ROUNDS, np.random.default_rng(seed)))
        assert loop == fast, f"{label}: the fast loop left the plain loop's random stream"
        exact = costs.markov_round_stats(P, Q, k)[1]
        worst = max(worst, abs(vec.tokens_per_call - exact))
        totals["loop"] += t_loop
        totals["fast"] += t_fast
        totals["vectorised"] += t_vec
        yield (f"{label}: tokens/call loop | vectorised | exact",
               f"{loop[1] / sweeps.ROUNDS:.4f} | {vec.tokens_per_call:.4f} | {exact:.4f}")
    n = len(rows)
    yield f"all {n} rows, plain loop", f"{totals['loop']:6.2f} s"
    yield f"all {n} rows, fast loop (same digits), ratio", (
        f"{totals['fast']:6.2f} s ({totals['loop'] / totals['fast']:.0f}x faster)")
    yield f"all {n} rows, vectorised simulator, ratio", (
        f"{totals['vectorised']:6.2f} s ({totals['loop'] / totals['vectorised']:.0f}x faster)")
    yield "vectorised vs exact Markov count, worst row", f"{worst:.4f} tokens/call"
    P, D = target(), draft("middling")
    _, t_widget = _timed(lambda: [simulate.run(P, D, j, 4000, np.random.default_rng(j), chains=200, burn_in=5)
                                  for j in range(1, 17)])
    yield "05 widget's simulation (16 k x 4,000 rounds)", f"{t_widget * 1e3:6.0f} ms"
