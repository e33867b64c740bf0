"""Exact enumeration: what one round of speculative decoding emits, with its exact probability.

No sampling here. A round from context ctx drafts one of V**k token sequences (each
with probability the product of its draft probabilities), then stops at position
i = 0..k-1 (accepted i drafts, rejected the next) or runs through all k; the round
ends with one sample from the residual, from p, or (after k acceptances) the bonus
distribution. Listing every (draft sequence, stop, final token) gives the round's
exact output distribution, for any of the four rules in speclab.rules.speculative.RULES.

    round_outcomes(P, Q, ctx, k, rule)   every outcome: emitted tokens, accepted count, probability
    first_token_marginal(P, Q, rule)     V x V: row c = the first token a round from c emits
    first_two_probabilities(P, Q, ctx, k, rule)  V x V exact joint of the first two emitted tokens
    first_tokens_joint(P, Q, ctx, k, n, rule)  (V,)*n exact joint of the first n emitted tokens
    target_tokens_joint(P, ctx, n)       (V,)*n joint of the target's own next n tokens
    window_tv(P, Q, ctx, k, n, rule)     TV between the two: the damage a window of n tokens sees
    expected_round(P, Q, ctx, k, rule)   (expected accepted drafts, expected emitted tokens)

V**k rows: k <= 5 is instant with V = 6 (7,776 draft sequences); k = 6 takes a second.

The models are bigram tables (the next token depends on the current token only), so a
round from context c depends on c alone, and rounds chain: after a round that emits m
tokens, the next round starts from the last of them. first_tokens_joint chains the
exact round distributions that way, with dense arrays (V**n entries).
"""
from functools import lru_cache
import itertools

import numpy as np

from .speculative import check_rule, residual


def _tables(P, Q, rule):
    """(acceptance probability a[c, x], fix-up distribution F[c]) for every context c and draft x."""
    P, Q = np.asarray(P, dtype=float), np.asarray(Q, dtype=float)
    check_rule(rule)
    if rule == "greedy":
        a = (np.arange(len(P))[None, :] == P.argmax(axis=1)[:, None]).astype(float)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(Q > 0, np.minimum(1.0, P / np.where(Q > 0, Q, 1.0)), 0.0)
    F = P / P.sum(axis=1, keepdims=True) if rule == "no_resample" else \
        np.array([residual(P[c], Q[c]) for c in range(len(P))])
    return a, F


@lru_cache(maxsize=8)
def _drafts(V, k):
    return np.array(list(itertools.product(range(V), repeat=k)), dtype=np.int64).reshape(-1, k)


def round_outcomes(P, Q, ctx, k, rule="correct"):
    """Every way one round from ctx can end, with its exact probability.

    Returns (tokens, accepted, prob):
      tokens   (M, k+1) int array, the emitted tokens of each outcome, padded with -1
      accepted (M,) how many drafts were accepted (the stop position)
      prob     (M,) probabilities, summing to 1
    Outcomes with zero probability are dropped; the same token list may appear on
    several rows (reached through different drafts), so sum over rows to aggregate.
    """
    P, Q = np.asarray(P, dtype=float), np.asarray(Q, dtype=float)
    V = len(P)
    a, F = _tables(P, Q, rule)
    D = _drafts(V, k)                                        # (N, k) every draft sequence
    pre = np.column_stack([np.full(len(D), ctx), D])         # prefixes: ctx, d0, ..., d_{k-1}
    draft_prob = Q[pre[:, :-1], D].prod(axis=1)
    acc = a[pre[:, :-1], D]                                  # (N, k) accept probability per position
    reach = np.column_stack([np.ones(len(D)), np.cumprod(acc, axis=1)])  # all accepted before i

    tokens, accepted, prob = [], [], []
    for i in range(k + 1):
        if i < k:   # rejected at position i: the first i drafts, then one fix-up token
            w = draft_prob * reach[:, i] * (1.0 - acc[:, i])
            final = F[pre[:, i]]
        else:       # all k accepted: the drafts, then the bonus token from the target
            w = draft_prob * reach[:, k]
            final = P[pre[:, k]]
        p = (w[:, None] * final).ravel()                     # (N * V,): draft sequence x final token
        keep = p > 0
        rows = np.full((len(D), V, k + 1), -1, dtype=np.int64)
        rows[:, :, :i] = D[:, None, :i]
        rows[:, :, i] = np.arange(V)[None, :]
        if rule == "continue" and i < k:                     # the stale drafts after the rejection
            rows[:, :, i + 1:k] = D[:, None, i + 1:]
        tokens.append(rows.reshape(-1, k + 1)[keep])
        accepted.append(np.full(int(keep.sum()), i, dtype=np.int64))
        prob.append(p[keep])
    return np.concatenate(tokens), np.concatenate(accepted), np.concatenate(prob)


def first_token_marginal(P, Q, rule="correct"):
    """M[c, x]: the probability that a round from context c emits x first (any k >= 1).

    The first emitted token depends only on the first draft (kept, or replaced by the
    fix-up sample), so a k = 1 enumeration gives it. For the correct rule M == P.
    """
    V = len(P)
    M = np.zeros((V, V))
    for c in range(V):
        tokens, _, prob = round_outcomes(P, Q, c, 1, rule)
        np.add.at(M[c], tokens[:, 0], prob)
    return M


def first_two_probabilities(P, Q, ctx, k, rule="correct"):
    """The exact V x V joint of the first two tokens emitted from ctx (rounds of k drafts).

    A round that emits two or more tokens fixes both; a round that emits one token t
    leaves the second to the next round, which starts from t.
    """
    V = len(P)
    tokens, _, prob = round_outcomes(P, Q, ctx, k, rule)
    J = np.zeros((V, V))
    two = tokens[:, 1] >= 0
    np.add.at(J, (tokens[two, 0], tokens[two, 1]), prob[two])
    one = np.zeros(V)
    np.add.at(one, tokens[~two, 0], prob[~two])
    return J + one[:, None] * first_token_marginal(P, Q, rule)


def expected_round(P, Q, ctx, k, rule="correct"):
    """(expected accepted drafts, expected emitted tokens) of one round from ctx."""
    tokens, accepted, prob = round_outcomes(P, Q, ctx, k, rule)
    emitted = (tokens >= 0).sum(axis=1)
    return float(prob @ accepted), float(prob @ emitted)


# --- windows of n tokens: rounds chained exactly ---------------------------------------

_ROUND_CACHE = {}


def _rounds_by_length(P, Q, k, rule):
    """R[L] of shape (V, V**L): R[L][c, seq] = P(a round from c emits exactly the L tokens seq).

    seq is the row-major index of the L tokens. Built position by position with dense arrays
    (the same sums as round_outcomes, but drafts after a stop are summed out at once, so the
    cost is V**(k+1) per context, not V**k outcome rows). Cached for the last few (P, Q, k, rule).
    """
    P, Q = np.asarray(P, dtype=float), np.asarray(Q, dtype=float)
    key = (P.tobytes(), Q.tobytes(), P.shape, int(k), rule)
    if key in _ROUND_CACHE:
        return _ROUND_CACHE[key]
    V = len(P)
    a, F = _tables(P, Q, rule)
    keep = Q * a                          # keep[prev, x]: x drafted after prev and kept
    reject = 1.0 - keep.sum(axis=1)       # the first draft after prev is rejected
    # stale[prev, s]: a draft after prev is rejected and the draft after it is s (rule "continue")
    stale = (Q * (1.0 - a)) @ Q
    R = {L: np.zeros((V, V ** L)) for L in range(1, k + 2)}

    def then(A, emitted, *M):
        """A (V, V**emitted) times M[prev, new] for each M: one new token axis per M, each drawn
        after prev, the last emitted token (the context itself when nothing is emitted yet)."""
        A = A.reshape(V) if emitted == 0 else A.reshape(V, V ** (emitted - 1), V)
        prev = A.ndim - 1                 # the context axis, or the last emitted token's axis
        out = A.reshape(A.shape + (1,) * len(M))
        for j, m in enumerate(M):
            shape = [1] * out.ndim
            shape[prev], shape[A.ndim + j] = V, V
            out = out * m.reshape(shape)
        return out.reshape(V, -1)

    def chain(A, steps):
        """Append `steps` draft tokens, each drafted from Q after the newest one (the last axis)."""
        for _ in range(steps):
            A = (A.reshape(V, -1, V)[..., None] * Q[None, None]).reshape(V, -1)
        return A

    A = np.ones((V, 1))                   # A[c, x_0..x_{i-1}]: the first i drafts are these and kept
    for i in range(k + 1):
        if i == k:                        # all k kept: the bonus from the target's row after the last
            R[k + 1] += then(A, i, P)
            break
        if rule == "continue" and i < k - 1:
            # the fix-up token t, then the k - 1 - i stale drafts: the first drafted after the
            # rejected draft (summed out in `stale`), each later one after the one before
            R[k] += chain(then(A, i, F, stale), k - 2 - i)
        else:                             # one fix-up token from F after the last kept token
            R[i + 1] += then(A, i, reject[:, None] * F)
        A = then(A, i, keep)
    if len(_ROUND_CACHE) >= 32:
        _ROUND_CACHE.pop(next(iter(_ROUND_CACHE)))
    _ROUND_CACHE[key] = R
    return R


def _chained(R, V, k, n):
    """J[m] of shape (V, V**m) for m = 1..n: J[m][c] = the joint of the first m tokens emitted from c."""
    J = {}
    for m in range(1, n + 1):
        out = np.zeros((V, V ** m))
        for L, RL in R.items():
            if L >= m:   # this round alone fixes the first m tokens: sum out the rest
                out += RL.reshape(V, V ** m, V ** (L - m)).sum(axis=2)
            else:        # L tokens, then the first m - L tokens of rounds from the last of them
                head = RL.reshape(V, V ** (L - 1), V)
                out += (head[:, :, :, None] * J[m - L][None, None, :, :]).reshape(V, V ** m)
        J[m] = out
    return J


def first_tokens_joint(P, Q, ctx, k, n, rule="correct"):
    """The exact joint of the first n tokens emitted from ctx (rounds of k drafts): shape (V,)*n.

    A round that emits at least n tokens fixes all n; one that emits fewer leaves the rest
    to the rounds that follow, each starting from the last token emitted so far.
    """
    V = len(P)
    J = _chained(_rounds_by_length(P, Q, k, rule), V, k, n)
    return J[n][ctx].reshape((V,) * n)


def target_tokens_joint(P, ctx, n):
    """The target's own joint of its next n tokens from ctx: J[x1, ..., xn] = P[ctx, x1] P[x1, x2] ..."""
    P = np.asarray(P, dtype=float)
    J = P[ctx].copy()
    for _ in range(n - 1):
        J = J[..., None] * P[np.indices(J.shape)[-1]]
    return J


def window_tv(P, Q, ctx, k, n, rule="correct"):
    """Total variation between the first n emitted tokens and the target's next n: what a window of n sees."""
    return 0.5 * float(np.abs(first_tokens_joint(P, Q, ctx, k, n, rule) - target_tokens_joint(P, ctx, n)).sum())


def window_tvs(P, Q, ctx, k, n_max, rule="correct"):
    """[window_tv(..., n, ...) for n = 1..n_max], sharing one chaining of the rounds."""
    V = len(P)
    J = _chained(_rounds_by_length(P, Q, k, rule), V, k, n_max)
    return np.array([0.5 * float(np.abs(J[n][ctx] - target_tokens_joint(P, ctx, n).ravel()).sum())
                     for n in range(1, n_max + 1)])


def expected_sampling_tv(dist, n):
    """The exact expected TV between the frequencies of n samples of `dist` and `dist` itself.

    This is the noise floor a perfect sampler scores at n samples. Each cell's count is
    Binomial(n, p); its mean absolute deviation has a closed form (de Moivre):
    E|X - np| = 2 v C(n, v) p^v (1 - p)^(n - v + 1), with v = floor(np) + 1. Exact for any
    cell size, where the normal approximation sum sqrt(p (1 - p) / (2 pi n)) needs np large.
    """
    from math import lgamma

    p = np.asarray(dist, dtype=float).ravel()
    p = p[p > 0]
    v = np.floor(n * p) + 1
    ok = (v <= n) & (p < 1)
    p, v = p[ok], v[ok]
    log_comb = lgamma(n + 1) - np.array([lgamma(x + 1) + lgamma(n - x + 1) for x in v])
    mad = 2 * v * np.exp(log_comb + v * np.log(p) + (n - v + 1) * np.log1p(-p))
    return 0.5 * float(mad.sum()) / n
