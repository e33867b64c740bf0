"""Vectorised speculative decoding: many independent rounds at once, in NumPy.

The loop in speclab.rules.speculative plays one round at a time with one rng.random() per
decision (the course's randomness contract), which makes it exactly checkable and
slow (about 1.4 s for the 60,000-trial experiment). This module plays every trial
of a batch at once. It follows the same rules and has the same distribution, but
not the same random stream: it draws uniforms in blocks (rng.random(size)), so its
numbers agree with the loop's within sampling noise, never digit for digit.

API (P target, Q draft: V x V row-stochastic arrays; rule one of
speclab.rules.speculative.RULES = "correct", "greedy", "no_resample", "continue";
rng a numpy Generator; k >= 1 drafts per round):

    rounds(P, Q, ctx, k, rng, rule="correct") -> Rounds
        One round from each context in ctx (an int array, shape (n,)), all at once.
        Rounds.tokens   (n, k+1) int: each round's emitted tokens, padded with -1
        Rounds.emitted  (n,) int: tokens emitted (1..k+1; "continue" emits k after a rejection)
        Rounds.accepted (n,) int: drafts accepted before the first rejection (0..k)
        Rounds.last     (n,) int: the last emitted token, where the next round starts

    first_two_frequencies(P, Q, ctx, k, trials, rng, rule="correct") -> (V, V) array
        The empirical joint of the first two emitted tokens over `trials` independent
        trials from the int ctx: notebook 04's experiment (the loop's
        speculative_joint), vectorised.

    first_tokens(P, Q, ctx, k, n, trials, rng, rule="correct") -> (trials, n) int array
        The first n emitted tokens of each of `trials` independent trials from the int
        ctx (rounds chained from the last emitted token): any window, not only two.

    run(P, Q, k, n_rounds, rng, rule="correct", ctx=0, chains=100, burn_in=0) -> Run
        A decoding run for sweeps (notebooks 05 and 06): each of `chains` independent
        chains starts at ctx and plays rounds one after another, each round starting
        from the last token the previous one emitted; the chains advance together.
        n_rounds (the total counted, over all chains) is split evenly between them
        (n_rounds // chains each, at least 1). The first burn_in rounds of every
        chain are played but not counted.
        Run.accepted  (chains, per_chain) int: accepted drafts, per round
        Run.emitted   (chains, per_chain) int: emitted tokens, per round
        Run.rounds    rounds counted (= chains * per_chain)
        Run.k
        Run.last      (chains,) int: each chain's last emitted token
        Run.accept_rate       accepted.sum() / (rounds * k)
        Run.tokens_per_call   emitted.sum() / rounds   (one target call per round)

    sweep(P, Q, ks, n_rounds, rngs, rule="correct", ctx=0, chains=100, burn_in=0) -> [Run]
        [run(P, Q, k, n_rounds, rng, ...) for k, rng in zip(ks, rngs)], the same numbers to the
        last digit (each k draws its uniforms from its own rng, as run does), played together:
        one pass over the rounds for every k at once (notebook 05's widget, a new draft per move).

Example, a k sweep (about 0.1 s per point for 40,000 rounds):

    from speclab import target, draft
    from speclab.decoding import simulate
    P, Q, rng = target(), draft("middling"), np.random.default_rng(30)
    for k in (1, 2, 4, 8):
        r = simulate.run(P, Q, k, 40_000, rng)
        print(k, r.accept_rate, r.tokens_per_call)

Chains and bias: a chain's first rounds start from ctx rather than from the
long-run mix of contexts, so short chains are biased toward ctx's behaviour. With
the default 100 chains a 40,000-round run has 400 rounds per chain; a few of them
feel the start. Pass chains=1 for one long chain (the loop's setting, slower), or
burn_in=20 to discard each chain's start. Exact values to compare against are in
speclab.rules.exact (expected_round gives one round's expectations from a fixed ctx).
"""
from dataclasses import dataclass

import numpy as np

from ..rules.speculative import check_rule, residual


def _cdf(M):
    """Column-major CDF table for _sample: entry [t, r] is cdf_r[t], for t = 0..V-2 (the last
    column is never needed). From each row's last token with mass on the entry is +inf, so
    rounding in the cumulative sum can never select a token of probability zero."""
    M = np.asarray(M, dtype=float)
    V = M.shape[1]
    cdf = np.cumsum(M, axis=1)
    last = V - 1 - np.argmax(M[:, ::-1] > 0, axis=1)
    cdf[np.arange(V)[None, :] >= last[:, None]] = np.inf
    return np.ascontiguousarray(cdf[:, :-1].T)


def _sample(cdf, rows, u):
    """For each i: the smallest token t with cdf_{rows[i]}[t] > u[i] (sample_from, vectorised).

    That token is the number of CDF entries <= u; counting them column by column, with a
    gather per column, is several times faster than searchsorted for a handful of tokens."""
    t = (cdf[0].take(rows) <= u).astype(np.int64)
    for column in cdf[1:]:
        t += column.take(rows) <= u
    return t


class _Model:
    """P and Q with everything a round needs precomputed for one rule."""

    def __init__(self, P, Q, rule):
        check_rule(rule)
        self.P, self.Q = np.asarray(P, dtype=float), np.asarray(Q, dtype=float)
        self.rule, self.V = rule, len(self.P)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.ratio = np.minimum(1.0, self.P / self.Q)     # only read where Q > 0 (drafted)
        self.argmax = self.P.argmax(axis=1)
        fix = self.P if rule == "no_resample" else [residual(self.P[c], self.Q[c]) for c in range(self.V)]
        self.q_cdf = _cdf(self.Q)
        # The round's last token: rows 0..V-1 sample the fix-up (after a rejection), V..2V-1 the bonus.
        self.end_cdf = _cdf(np.vstack([np.asarray(fix, dtype=float), self.P]))


@dataclass
class Rounds:
    tokens: np.ndarray
    emitted: np.ndarray
    accepted: np.ndarray

    @property
    def last(self):
        return self.tokens[np.arange(len(self.tokens)), self.emitted - 1]


def _rounds(m, ctx, k, rng):
    # Arrays are position-major (k, n): each position's values for all n rounds lie together.
    n = len(ctx)
    u_draft, u_accept, u_end = rng.random((k, n)), rng.random((k, n)), rng.random(n)

    pre = np.empty((k + 1, n), dtype=np.int64)               # prefixes: ctx, d0, ..., d_{k-1}
    pre[0] = ctx
    for i in range(k):
        pre[i + 1] = _sample(m.q_cdf, pre[i], u_draft[i])
    drafted = pre[1:]

    if m.rule == "greedy":
        ok = drafted == m.argmax[pre[:-1]]                    # no uniform: argmax agreement
    else:
        ok = u_accept < m.ratio.take(pre[:-1] * m.V + drafted)
    ok = np.vstack([ok, np.zeros((1, n), dtype=bool)])       # a sentinel "rejection" at position k
    accepted = np.argmin(ok, axis=0)                         # the first rejection, or k

    stopped = accepted < k
    at = pre[accepted, np.arange(n)]                         # the prefix where the round ends
    end = _sample(m.end_cdf, np.where(stopped, at, at + m.V), u_end)

    tokens = np.full((k + 1, n), -1, dtype=np.int64)
    for i in range(k + 1):
        if i < k:
            kept = i < accepted
            if m.rule == "continue":                         # stale drafts after the rejection too
                kept |= stopped & (i > accepted)
            tokens[i] = np.where(kept, drafted[i], -1)
        tokens[i] = np.where(i == accepted, end, tokens[i])
    emitted = np.where(stopped & (m.rule == "continue"), k, accepted + 1)
    return Rounds(tokens.T, emitted, accepted)


def rounds(P, Q, ctx, k, rng, rule="correct"):
    """One round from each context in ctx (int array), all at once: a Rounds."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return _rounds(_Model(P, Q, rule), np.asarray(ctx, dtype=np.int64).reshape(-1), k, rng)


def first_two_frequencies(P, Q, ctx, k, trials, rng, rule="correct"):
    """V x V empirical joint of the first two emitted tokens over `trials` trials from ctx."""
    m = _Model(P, Q, rule)
    first = _rounds(m, np.full(trials, ctx, dtype=np.int64), k, rng)
    a, b = first.tokens[:, 0], first.tokens[:, 1].copy()
    short = first.emitted < 2                                # one token out: one more round from it
    if short.any():
        b[short] = _rounds(m, a[short], k, rng).tokens[:, 0]
    return np.bincount(a * m.V + b, minlength=m.V * m.V).reshape(m.V, m.V) / trials


def first_tokens(P, Q, ctx, k, n, trials, rng, rule="correct"):
    """(trials, n) int array: the first n tokens emitted in each of `trials` trials from ctx."""
    if k < 1 or n < 1:
        raise ValueError(f"k and n must be at least 1, got k = {k}, n = {n}")
    m = _Model(P, Q, rule)
    out = np.full((trials, n), -1, dtype=np.int64)
    filled = np.zeros(trials, dtype=np.int64)
    start = np.full(trials, ctx, dtype=np.int64)
    active = np.arange(trials)
    while len(active):
        r = _rounds(m, start[active], k, rng)
        pos = filled[active][:, None] + np.arange(k + 1)[None, :]
        ok = (np.arange(k + 1)[None, :] < r.emitted[:, None]) & (pos < n)
        rows = np.broadcast_to(active[:, None], pos.shape)
        out[rows[ok], pos[ok]] = r.tokens[ok]
        filled[active] += r.emitted
        start[active] = r.last
        active = active[filled[active] < n]
    return out


@dataclass
class Run:
    accepted: np.ndarray
    emitted: np.ndarray
    k: int
    last: np.ndarray

    @property
    def rounds(self):
        return self.accepted.size

    @property
    def accept_rate(self):
        return float(self.accepted.sum()) / (self.rounds * self.k)

    @property
    def tokens_per_call(self):
        return float(self.emitted.sum()) / self.rounds


def run(P, Q, k, n_rounds, rng, rule="correct", ctx=0, chains=100, burn_in=0):
    """`chains` chains of rounds from ctx, each continuing from its last emitted token: a Run."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    m = _Model(P, Q, rule)
    chains = max(1, min(chains, n_rounds))
    per_chain = max(1, n_rounds // chains)
    t = np.full(chains, ctx, dtype=np.int64)
    accepted = np.empty((chains, per_chain), dtype=np.int64)
    emitted = np.empty((chains, per_chain), dtype=np.int64)
    for j in range(-burn_in, per_chain):
        r = _rounds(m, t, k, rng)
        t = r.last
        if j >= 0:
            accepted[:, j], emitted[:, j] = r.accepted, r.emitted
    return Run(accepted, emitted, k, t)


def sweep(P, Q, ks, n_rounds, rngs, rule="correct", ctx=0, chains=100, burn_in=0):
    """run(P, Q, k, n_rounds, rng, ...) for each k with its own rng, the same Runs, computed together.

    Every k's chains sit side by side in one set of columns (each column knows its k), so a round
    is one pass of NumPy over all of them instead of one pass per k: the same uniforms, drawn from
    each k's rng in run's order, meet the same comparisons, so each Run equals run's."""
    ks = [int(k) for k in ks]
    if min(ks) < 1:
        raise ValueError(f"k must be at least 1, got {min(ks)}")
    m = _Model(P, Q, rule)
    chains = max(1, min(chains, n_rounds))
    per_chain = max(1, n_rounds // chains)
    kmax, width = max(ks), chains * len(ks)
    kcol = np.repeat(ks, chains)                            # each column's k
    position = np.arange(kmax + 1)[:, None]
    beyond = position >= kcol                               # positions past a column's k: never kept
    cols = np.arange(width)
    t = np.full(width, ctx, dtype=np.int64)
    accepted = np.empty((width, per_chain), dtype=np.int64)
    emitted = np.empty((width, per_chain), dtype=np.int64)
    u_draft, u_accept, u_end = np.zeros((kmax, width)), np.ones((kmax, width)), np.empty(width)
    for j in range(-burn_in, per_chain):
        for i, (k, rng) in enumerate(zip(ks, rngs)):        # run's draws, in run's order, per k
            block = slice(i * chains, (i + 1) * chains)
            u_draft[:k, block], u_accept[:k, block], u_end[block] = (
                rng.random((k, chains)), rng.random((k, chains)), rng.random(chains))
        pre = np.empty((kmax + 1, width), dtype=np.int64)
        pre[0] = t
        for i in range(kmax):
            pre[i + 1] = _sample(m.q_cdf, pre[i], u_draft[i])
        drafted = pre[1:]
        if m.rule == "greedy":
            ok = drafted == m.argmax[pre[:-1]]
        else:
            ok = u_accept < m.ratio.take(pre[:-1] * m.V + drafted)
        ok = np.vstack([ok, np.zeros((1, width), dtype=bool)]) & ~beyond
        taken = np.argmin(ok, axis=0)                       # the first rejection, or k
        stopped = taken < kcol
        at = pre[taken, cols]
        end = _sample(m.end_cdf, np.where(stopped, at, at + m.V), u_end)
        if m.rule == "continue":                            # k tokens after a rejection: the last
            out = np.where(stopped, kcol, taken + 1)         # is the k-th draft, or the fix-up there
            t = np.where(stopped & (taken < kcol - 1), drafted[kcol - 1, cols], end)
        else:
            out, t = taken + 1, end
        if j >= 0:
            accepted[:, j], emitted[:, j] = taken, out
    return [Run(accepted[i * chains:(i + 1) * chains], emitted[i * chains:(i + 1) * chains], k,
                t[i * chains:(i + 1) * chains]) for i, k in enumerate(ks)]
