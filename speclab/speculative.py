"""Reference implementations of what notebooks 01-04 teach, for later notebooks to reuse.

Each function here is one a notebook asks the student to write; a later notebook
imports it from here instead of asking again. All randomness follows the contract
in speclab.sampling: one rng.random() per sampled token and per accept test, in the
order (k draft tokens), then position by position (accept test, and on rejection one
residual sample), then after k acceptances one bonus sample from the target.
"""
import numpy as np

from .sampling import sample_from

RULES = ("correct", "greedy", "no_resample", "continue")


# --- notebook 01: greedy decoding, plain and speculative -----------------------------

def greedy_decode(P, ctx, n):
    """(tokens, target_calls): n argmax steps from ctx, one target call each."""
    tokens, t = [], ctx
    for _ in range(n):
        t = int(np.argmax(P[t]))
        tokens.append(t)
    return tokens, n


def speculative_greedy(P, Q, ctx, n, k):
    """(tokens, target_calls): greedy drafts of k, one verify call per round; same tokens as greedy_decode."""
    tokens, calls, t = [], 0, ctx
    while len(tokens) < n:
        drafted, d = [], t
        for _ in range(k):
            d = int(np.argmax(Q[d]))
            drafted.append(d)
        calls += 1  # one target pass scores all k + 1 prefixes
        prefix = t
        for x in drafted:
            want = int(np.argmax(P[prefix]))
            tokens.append(want)
            if want != x:
                break
            prefix = x
        else:
            tokens.append(int(np.argmax(P[prefix])))  # bonus: the target's choice after the last draft
        t = tokens[-1]
    return tokens[:n], calls


def trusting_greedy(P, Q, ctx, n, k, m):
    """BROKEN on purpose (01's break-it): speculative_greedy, except that every m-th round
    (rounds m, 2m, ... counted from 1) emits its k guesses unchecked: no target call, no bonus.

    The graders lend it to 01's measurement, so that a slip in the broken variant costs the
    measurement nothing.
    """
    tokens, calls, t, round_no = [], 0, ctx, 0
    while len(tokens) < n:
        round_no += 1
        drafted, d = [], t
        for _ in range(k):
            d = int(np.argmax(Q[d]))
            drafted.append(d)
        if round_no % m == 0:
            tokens.extend(drafted)  # trusted: emitted as guessed, the target never sees them
        else:
            calls += 1
            prefix = t
            for x in drafted:
                want = int(np.argmax(P[prefix]))
                tokens.append(want)
                if want != x:
                    break
                prefix = x
            else:
                tokens.append(int(np.argmax(P[prefix])))
        t = tokens[-1]
    return tokens[:n], calls


# --- notebooks 02-03: one token ----------------------------------------------------

def accept_prob(p, q, x):
    """min(1, p[x] / q[x]): the chance of keeping a drafted x."""
    return min(1.0, float(p[x]) / float(q[x]))


def acceptance_rate(p, q):
    """Expected acceptance of one drafted token: sum of min(p, q) = 1 - TV(p, q)."""
    return float(np.minimum(p, q).sum())


def residual(p, q):
    """norm(max(0, p - q)); p itself when p - q has no positive mass (then nothing is ever rejected)."""
    r = np.clip(np.asarray(p, dtype=float) - np.asarray(q, dtype=float), 0.0, None)
    s = r.sum()
    return r / s if s > 0 else np.asarray(p, dtype=float) / np.sum(p)


def speculative_sample(p, q, rng):
    """One token: draft x ~ q, keep it with min(1, p/q), else sample the residual. 2 or 3 uniforms."""
    x = sample_from(q, rng.random())
    if rng.random() < accept_prob(p, q, x):
        return x
    return sample_from(residual(p, q), rng.random())


# --- notebook 04: the whole round -------------------------------------------------

def tv_distance(a, b):
    """Total variation distance: 0.5 * sum |a - b|, over arrays of any shape."""
    return 0.5 * float(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)).sum())


def draft_tokens(Q, ctx, k, rng):
    """k tokens sampled from the draft, each conditioned on the one before (k uniforms)."""
    drafted, t = [], ctx
    for _ in range(k):
        t = sample_from(Q[t], rng.random())
        drafted.append(t)
    return drafted


def verify_round(P, Q, ctx, drafted, rng, rule="correct"):
    """The tokens one round emits (1 to k+1): walk the drafts, stop at the first rejection.

    rule: "correct" (the paper), or a deliberate breakage: "greedy" (accept iff x is
    the argmax of p; no uniform for the test), "no_resample" (on rejection sample p,
    not the residual), "continue" (on rejection also emit the remaining drafts).
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    prefixes = [ctx] + list(drafted)  # one target call scores all k + 1 of them
    out = []
    for i, x in enumerate(drafted):
        p, q = P[prefixes[i]], Q[prefixes[i]]
        if rule == "greedy":
            ok = x == int(np.argmax(p))
        else:
            ok = rng.random() < accept_prob(p, q, x)
        if ok:
            out.append(int(x))
            continue
        fix = p if rule == "no_resample" else residual(p, q)
        out.append(sample_from(fix, rng.random()))
        if rule == "continue":
            out.extend(int(d) for d in drafted[i + 1:])
        return out
    out.append(sample_from(P[prefixes[-1]], rng.random()))  # the bonus token
    return out


def first_two_tokens(P, Q, ctx, k, rng, rule="correct"):
    """Run rounds from ctx (a fresh draft each round) until two tokens are out; return them."""
    out, t = [], ctx
    while len(out) < 2:
        emitted = verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)
        out.extend(emitted)
        t = out[-1]
    return out[0], out[1]


def speculative_joint(P, Q, ctx, k, trials, rng, rule="correct"):
    """V x V empirical joint of the first two emitted tokens over `trials` independent trials."""
    V = len(P)
    counts = np.zeros((V, V))
    for _ in range(trials):
        a, b = first_two_tokens(P, Q, ctx, k, rng, rule)
        counts[a, b] += 1
    return counts / trials


def target_joint(P, ctx):
    """The target's exact joint of its next two tokens: J[a, b] = P[ctx, a] * P[a, b]."""
    return P[ctx][:, None] * P


def greedy_rounds(P, Q, ctx, n, k):
    """Tokens emitted by each verify pass of speculative_greedy (they sum to at least n)."""
    per_round, made, t = [], 0, ctx
    while made < n:
        d, prefix, kept = t, t, 0
        drafted = []
        for _ in range(k):
            d = int(np.argmax(Q[d]))
            drafted.append(d)
        for x in drafted:
            want = int(np.argmax(P[prefix]))
            kept += 1
            prefix = want
            if want != x:
                break
        else:
            kept += 1  # bonus
            prefix = int(np.argmax(P[prefix]))
        per_round.append(kept)
        made, t = made + kept, prefix
    return per_round


def rounds_with_accuracy(accuracy, k, n, rng):
    """Tokens per verify pass when each drafted token matches the target with probability `accuracy`.

    A round keeps the run of correct guesses, then one token from the target (its correction,
    or the bonus after k hits): 1 to k + 1 tokens. Rounds continue until n tokens are out.
    """
    per_round, made = [], 0
    while made < n:
        hits = 0
        while hits < k and rng.random() < accuracy:
            hits += 1
        per_round.append(hits + 1)
        made += hits + 1
    return per_round
