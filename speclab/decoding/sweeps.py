"""The NumPy walk-through's sweep experiments, as a plain loop over speculative rounds.

Recipe (it reproduces the walk-through's tables digit for digit): every row of a table
gets its own generator numpy.random.default_rng(seed) and runs 40,000 rounds; the
first round starts from context 'a', each later one from the last token the previous
round emitted, with a fresh draft of k tokens each round. Then

    kept fraction   = kept drafts / (rounds * k)   (the walk-through's "accept rate" column;
                                                    not the paper's alpha, see speclab.speed.costs)
    tokens per call = emitted tokens / rounds
    speedup         = tokens per call / (1 + k * c)

Seeds: 20 quality sweep (drafts blend(P, other2, w)), 21 temperature mismatch
(draft temper(P, T)), 30 k sweep (middling draft), 40 break-even (middling, k = 4),
41 the poor draft at c = 0.25.

`run_rounds` is the loop written with the course's building blocks (draft_tokens,
verify_round). `run_rounds_fast` plays the same rounds (speclab.rules.speculative.verify_drafts,
the one round) with the distributions precomputed as plain Python lists and the uniforms
drawn in one block: it consumes them in the same order, so it returns the same counts
(tests/speclab/test_sweeps.py checks this), several times faster.
"""
from bisect import bisect_right

import numpy as np

from ..speed.costs import break_even_cost
from ..rules.sampling import sample_from
from ..rules.speculative import accept_prob, draft_tokens, residual, verify_round, verify_drafts
from ..models.tables import CONTEXT, blend, draft, table, target, temper

ROUNDS = 40_000
SEEDS = {"quality": 20, "temperature": 21, "k": 30, "break_even": 40, "poor": 41}
BLENDS = (1.00, 0.95, 0.85, 0.60, 0.30, 0.00)
TEMPERATURES = (1.0, 1.3, 2.0, 0.5)
KS = (1, 2, 3, 4, 5, 6, 8, 12, 16)
COSTS = (0.01, 0.05, 0.10, None, 0.60, 1.00)  # None: the break-even cost itself


def kept_drafts(emitted, k):
    """How many of the k drafts a round kept, from the tokens it emitted (1 to k + 1 of them).

    A rejection at the (i+1)-th draft emits i kept drafts and one residual token; k kept
    drafts emit k + 1 tokens, the last being the bonus. Either way: len(emitted) - 1.
    """
    return min(len(emitted) - 1, k)


def run_rounds(P, Q, k, rounds, rng, ctx=CONTEXT):
    """(accepted drafts, emitted tokens) over `rounds` rounds, each starting where the last ended."""
    accepted = emitted = 0
    t = ctx
    for _ in range(rounds):
        out = verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng)
        accepted += kept_drafts(out, k)
        emitted += len(out)
        t = out[-1]
    return accepted, emitted


class _ListRows:
    """verify_drafts' rows for bigram tables, precomputed once as plain Python lists.

    The same numbers as TableRows (min(1, p/q), argmax, inverse-CDF samples), without a NumPy
    call per decision: that is all that makes the fast loop fast. Set .prefixes for each round.
    """

    def __init__(self, P, Q):
        V = len(P)
        self.V, self.prefixes = V, None
        self.dists = {"target": P, "residual": np.array([residual(P[x], Q[x]) for x in range(V)]), "draft": Q}
        self.cdfs = {kind: [np.cumsum(M[x]).tolist() for x in range(V)] for kind, M in self.dists.items()}
        self.ratio = [[accept_prob(P[x], Q[x], y) if Q[x, y] > 0 else 0.0 for y in range(V)] for x in range(V)]
        self.best = [int(np.argmax(P[x])) for x in range(V)]

    def draw(self, kind, row, u):
        i = bisect_right(self.cdfs[kind][row], u)
        return i if i < self.V else sample_from(self.dists[kind][row], u)  # rounding fallback, as sample_from

    def keep(self, i, x):
        return self.ratio[self.prefixes[i]][x]

    def favourite(self, i):
        return self.best[self.prefixes[i]]

    def sample(self, i, dist, u):
        return self.draw(dist, self.prefixes[i], u)


class _Uniforms:
    """An rng whose random() hands out a block of uniforms drawn at once, in order."""

    def __init__(self, us):
        self.random = iter(us).__next__


def run_rounds_fast(P, Q, k, rounds, rng, ctx=CONTEXT):
    """run_rounds' counts from the same random stream: the same rounds (speculative.verify_drafts),
    on precomputed Python lists, with the uniforms drawn in one block.

    Draws rounds * (2k + 1) uniforms up front (the most a round can use), so it
    leaves `rng` further along than run_rounds would: give each call its own generator.
    """
    rows = _ListRows(np.asarray(P, dtype=float), np.asarray(Q, dtype=float))
    us = _Uniforms(rng.random(rounds * (2 * k + 1)).tolist())
    q_cdfs, V = rows.cdfs["draft"], rows.V
    accepted = emitted = 0
    t = ctx
    for _ in range(rounds):
        drafted, d = [], t
        for _ in range(k):   # draft_tokens, inlined: the loop's hottest line
            u = us.random()
            i = bisect_right(q_cdfs[d], u)
            d = i if i < V else rows.draw("draft", d, u)
            drafted.append(d)
        rows.prefixes = [t] + drafted
        out, stop = verify_drafts(drafted, rows, us)
        accepted += stop
        emitted += len(out)
        t = out[-1]
    return accepted, emitted


def measure(P, Q, k, rounds, rng, ctx=CONTEXT, fast=True):
    """(kept fraction, tokens per call) of `rounds` rounds of speculation with k drafts."""
    accepted, emitted = (run_rounds_fast if fast else run_rounds)(P, Q, k, rounds, rng, ctx)
    return accepted / (rounds * k), emitted / rounds


def _speedup(tokens, k, c):
    """tokens per call / (1 + k * c), as speclab.speed.costs.speedup: written out here because that function is
    notebook 05's exercise, which a kernel grading 05 does not have (grading/kernels/hidden.py), and 05 runs these
    sweeps before the exercise."""
    return tokens / (1 + k * c)


def _row(label, P, Q, k, c, seed, rounds, fast):
    a, tokens = measure(P, Q, k, rounds, np.random.default_rng(seed), fast=fast)
    return {"label": label, "k": k, "c": c, "kept": a, "tokens": tokens,
            "speedup": _speedup(tokens, k, c)}


def _progress(progress, i, n, row):
    if progress:
        progress(i + 1, n, row)


def quality_sweep(rounds=ROUNDS, seed=SEEDS["quality"], k=4, c=0.1, fast=True, progress=None):
    """Blend weight from 1 (perfect draft) to 0 (junk): one row per weight in BLENDS."""
    P, other = target(), table("other2")
    rows = []
    for i, w in enumerate(BLENDS):
        rows.append(_row(f"blend {w:.2f}", P, blend(P, other, w), k, c, seed, rounds, fast))
        rows[-1]["blend"] = w
        _progress(progress, i, len(BLENDS), rows[-1])
    return rows


def temperature_sweep(rounds=ROUNDS, seed=SEEDS["temperature"], k=4, c=0.1, fast=True, progress=None):
    """The target drafting for itself at the wrong temperature T: one row per T in TEMPERATURES."""
    P = target()
    rows = []
    for i, T in enumerate(TEMPERATURES):
        rows.append(_row(f"draft T={T:.1f}", P, temper(P, T), k, c, seed, rounds, fast))
        rows[-1]["T"] = T
        _progress(progress, i, len(TEMPERATURES), rows[-1])
    return rows


def k_sweep(rounds=ROUNDS, seed=SEEDS["k"], kind="middling", c=0.1, ks=KS, fast=True, progress=None):
    """The middling draft at each k in KS (seed 30 for every row)."""
    P, Q = target(), draft(kind)
    rows = []
    for i, k in enumerate(ks):
        rows.append(_row(f"k={k}", P, Q, k, c, seed, rounds, fast))
        _progress(progress, i, len(ks), rows[-1])
    return rows


def break_even_table(rounds=ROUNDS, seed=SEEDS["break_even"], k=4, fast=True):
    """The middling draft at k = 4 priced at each c in COSTS (None = break-even): (tokens, c*, rows)."""
    _, tokens = measure(target(), draft("middling"), k, rounds, np.random.default_rng(seed), fast=fast)
    c_star = break_even_cost(tokens, k)
    rows = []
    for c in COSTS:
        c = c_star if c is None else c
        rows.append({"c": c, "cost": 1 + k * c, "speedup": _speedup(tokens, k, c)})
    return tokens, c_star, rows


def poor_draft(rounds=ROUNDS, seed=SEEDS["poor"], k=4, c=0.25, fast=True):
    """The poor draft priced at a quarter of the target: (tokens per call, speedup)."""
    _, tokens = measure(target(), draft("poor"), k, rounds, np.random.default_rng(seed), fast=fast)
    return tokens, _speedup(tokens, k, c)
