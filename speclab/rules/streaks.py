"""Acceptance that comes in streaks: notebook 05's break-it, reference versions and exact answers.

The i.i.d. formula E[N] = (1 - a^(k+1)) / (1 - a) assumes every drafted token is kept with
the same probability alpha, independently. Notebook 05 breaks that assumption in one named
way and keeps alpha fixed:

* the text is a row of *agreement bits*, one per position: 1 where the draft's token would be
  kept, 0 where it would be rejected. The bits are a two-state Markov chain whose long-run
  share of ones is alpha and whose lag-1 correlation is rho (rho = 0: the i.i.d. case).
  From a 1 the next bit is 1 with probability alpha + rho (1 - alpha); from a 0, alpha (1 - rho).
* speculation walks along the row: a round starting at position t tests bits t, t+1, ...
  and stops at the first 0 (a rejection) or after k ones; it emits kept + 1 tokens (the kept
  drafts, then the target's correction or bonus token), so the next round starts at
  t + kept + 1. A bonus position's bit is never tested.

`streaky_bits` and `replay` are the reference versions of the two exercises;
`markov_bits_exact` is the exact long-run answer for the Markov bits, and
`round_start_pair` the exact answer for the other streaky model the notebook discusses (each
round keeps its drafts with the beta of the context it starts in).

An identity that holds for any acceptance process: every rejection ends a round, so with
alpha_run = kept drafts / tested drafts and f_full = the share of rounds that kept all k,

    tokens per call = 1 + alpha_run / (1 - alpha_run) * (1 - f_full)  <=  1 / (1 - alpha_run).
"""
import numpy as np


def transition(alpha, rho):
    """(P(1 | previous 1), P(1 | previous 0)) of agreement bits with mean alpha and lag-1 correlation rho."""
    return alpha + rho * (1 - alpha), alpha * (1 - rho)


def streaky_bits(alpha, rho, n, rng):
    """n agreement bits (a list of 0/1): the first is 1 with probability alpha, each later one with
    the probability set by the bit before it. One rng.random() per bit, bit = 1 iff u < probability."""
    stay, enter = transition(alpha, rho)
    bits, prob = [], alpha
    for _ in range(n):
        bit = 1 if rng.random() < prob else 0
        bits.append(bit)
        prob = stay if bit else enter
    return bits


def replay(bits, k):
    """Speculation with k drafts per round walked along agreement bits.

    Returns (tokens_per_call, alpha_run, survival): emitted tokens / rounds; kept drafts /
    tested drafts; and survival[j] (j = 0..k), the share of rounds that kept at least j drafts.
    Rounds start at position 0 and are played while at least k + 1 bits remain from the start.
    """
    bits = [int(b) for b in bits]
    counts = [0] * (k + 1)
    t = rounds = emitted = kept = tested = 0
    while t + k < len(bits):
        j = 0
        while j < k and bits[t + j] == 1:
            j += 1
        rounds += 1
        emitted += j + 1
        kept += j
        tested += j + 1 if j < k else k
        counts[j] += 1
        t += j + 1
    if rounds == 0:
        raise ValueError(f"need at least k + 1 = {k + 1} bits for one round, got {len(bits)}")
    survival = [sum(counts[j:]) / rounds for j in range(k + 1)]
    return emitted / rounds, kept / tested, survival


def markov_bits_exact(alpha, rho, k):
    """Exact long-run (tokens_per_call, alpha_run, survival) of `replay` on Markov agreement bits.

    A round's fate depends only on its first bit (then each further draft is kept with P(1 | 1)),
    and the next round's first bit only on how this one ended: after a rejection it follows a 0;
    after k kept drafts the untested bonus position sits between, two steps after a 1. That
    two-state chain of round starts has a stationary share s of rounds that start on a 1.
    """
    stay, enter = transition(alpha, rho)
    if k < 1:
        raise ValueError("k must be at least 1")
    full = stay ** (k - 1)                            # P(all k kept | first kept)
    after_full = stay * stay + (1 - stay) * enter     # P(1) two steps after a 1
    from_one = full * after_full + (1 - full) * enter
    s = enter / (1 - from_one + enter)
    survival = [1.0] + [s * stay ** (j - 1) for j in range(1, k + 1)]
    kept = sum(survival[1:])
    tested = sum(survival[:k])                        # draft j + 1 is tested iff j drafts were kept, j < k
    return 1.0 + kept, kept / tested, survival


def round_start_pair(betas, weights, k):
    """(tokens_per_call, alpha_run, alpha_starts) when each round keeps its drafts with the beta of
    the context it starts in: contexts start rounds with frequencies `weights`.

    alpha_starts = sum(weights * betas) is beta averaged over round starts; alpha_run is kept /
    tested drafts, beta averaged over the drafts actually tested (the course's alpha).
    """
    b, w = np.asarray(betas, dtype=float), np.asarray(weights, dtype=float)
    powers = b[:, None] ** np.arange(k + 1)           # beta^j, j = 0..k
    kept = float(w @ powers[:, 1:].sum(axis=1))
    tested = float(w @ powers[:, :k].sum(axis=1))
    return 1.0 + kept, kept / tested, float(w @ b)


def bound(alpha_run):
    """Tokens per call can never exceed 1 / (1 - alpha_run), whatever the correlation."""
    return float("inf") if alpha_run >= 1 else 1.0 / (1.0 - alpha_run)
