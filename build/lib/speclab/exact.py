"""Exact enumeration: what one round of speculative decoding emits, with its exact probability.

No sampling here. A round from context ctx drafts one of V**k token sequences (each
with probability the product of its draft probabilities), then stops at position
i = 0..k-1 (accepted i drafts, rejected the next) or runs through all k; the round
ends with one sample from the residual, from p, or (after k acceptances) the bonus
distribution. Listing every (draft sequence, stop, final token) gives the round's
exact output distribution, for any of the four rules in speclab.speculative.RULES.

    round_outcomes(P, Q, ctx, k, rule)   every outcome: emitted tokens, accepted count, probability
    first_token_marginal(P, Q, rule)     V x V: row c = the first token a round from c emits
    first_two_joint(P, Q, ctx, k, rule)  V x V exact joint of the first two emitted tokens
    expected_round(P, Q, ctx, k, rule)   (expected accepted drafts, expected emitted tokens)

V**k rows: k <= 5 is instant with V = 6 (7,776 draft sequences); k = 6 takes a second.
"""
from functools import lru_cache
import itertools

import numpy as np

from .speculative import RULES, residual


def _tables(P, Q, rule):
    """(acceptance probability a[c, x], fix-up distribution F[c]) for every context c and draft x."""
    P, Q = np.asarray(P, dtype=float), np.asarray(Q, dtype=float)
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
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


def first_two_joint(P, Q, ctx, k, rule="correct"):
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
