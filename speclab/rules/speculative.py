"""Reference implementations of what notebooks 01-04 teach, for later notebooks to reuse.

Each function here is one a notebook asks the student to write; a later notebook
imports it from here instead of asking again. All randomness follows the contract
in speclab.rules.sampling: one rng.random() per sampled token and per accept test, in the
order (k draft tokens), then position by position (accept test, and on rejection one
residual sample), then after k acceptances one bonus sample from the target.

The round's logic lives once, in verify_drafts: verify_round (tables), roundview's trace,
textspec's rounds on whole-context models and the sweeps' fast loop all call it. simulate.py
(vectorised) and exact.py (enumeration) keep their own forms of the rules, and
tests/speclab/test_simulate.py checks them against it outcome by outcome.
"""
import numpy as np

from ..plumbing.checks import check_equal, check_tokens
from .sampling import ScriptedRNG, sample_from
from ..models.tokens import name, names

RULES = ("correct", "greedy", "no_resample", "continue")


# --- notebook 01: greedy decoding, plain and speculative -----------------------------

def greedy_decode(P, ctx, n):
    """(tokens, target_calls): n argmax steps from ctx, one target call each."""
    tokens, t = [], ctx
    for _ in range(n):
        t = int(np.argmax(P[t]))
        tokens.append(t)
    return tokens, n


def _greedy_verify(P, t, drafted):
    """What one target pass emits after t: its own choice at each prefix up to the first that differs from
    the draft's guess; when all k agree, all k and the bonus (the target's choice after the last guess)."""
    tokens, prefix = [], t
    for x in drafted:
        want = int(np.argmax(P[prefix]))
        tokens.append(want)
        if want != x:
            return tokens
        prefix = x
    return tokens + [int(np.argmax(P[prefix]))]


def speculative_greedy(P, Q, ctx, n, k):
    """(tokens, target_calls): greedy drafts of k, one verify call per round; same tokens as greedy_decode."""
    tokens, calls, t = [], 0, ctx
    while len(tokens) < n:
        drafted = greedy_decode(Q, t, k)[0]  # the draft's k greedy guesses
        calls += 1  # one target pass scores all k + 1 prefixes
        tokens += _greedy_verify(P, t, drafted)
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
        drafted = greedy_decode(Q, t, k)[0]  # the draft's k greedy guesses
        if round_no % m == 0:
            tokens.extend(drafted)  # trusted: emitted as guessed, the target never sees them
        else:
            calls += 1
            tokens += _greedy_verify(P, t, drafted)
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


def check_rule(rule):
    """Raise ValueError unless rule is one of RULES (a typo must not fall back to the correct rule)."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")


def verify_drafts(drafted, rows, rng, rule="correct"):
    """The round's logic, the one copy that every round in speclab runs: (emitted, stop).

    Left to right, draft i is tested at prefix i (the context, then the drafts before it); the
    first rejection emits one fix-up token and ends the round; k acceptances earn the bonus
    token from the target's distribution after the last draft. stop is the position of the
    first rejection, or k. `rows` says where the distributions at prefix i come from (bigram
    tables, a model of the whole context, precomputed lists for speed):
        rows.keep(i, x)         min(1, p(x) / q(x)) at prefix i
        rows.favourite(i)       the argmax of p at prefix i (the greedy shortcut's test)
        rows.sample(i, dist, u) a token from dist ("residual" or "target") at prefix i, uniform u
    rule: "correct" (the paper), or a deliberate breakage: "greedy" (keep x iff it is the
    argmax of p; no uniform for the test), "no_resample" (on rejection sample p, not the
    residual), "continue" (on rejection also emit the remaining drafts, untested).
    """
    check_rule(rule)
    out = []
    for i, x in enumerate(drafted):
        kept = x == rows.favourite(i) if rule == "greedy" else rng.random() < rows.keep(i, x)
        if kept:
            out.append(int(x))
            continue
        out.append(rows.sample(i, "target" if rule == "no_resample" else "residual", rng.random()))
        if rule == "continue":
            out.extend(int(d) for d in drafted[i + 1:])
        return out, i
    out.append(rows.sample(len(drafted), "target", rng.random()))  # the bonus token
    return out, len(drafted)


class TableRows:
    """The distributions a round reads from bigram tables: at prefix i, row prefixes[i] of P and Q."""

    def __init__(self, P, Q, prefixes):
        self.P, self.Q, self.prefixes = P, Q, prefixes

    def keep(self, i, x):
        return accept_prob(self.P[self.prefixes[i]], self.Q[self.prefixes[i]], x)

    def favourite(self, i):
        return int(np.argmax(self.P[self.prefixes[i]]))

    def sample(self, i, dist, u):
        p = self.P[self.prefixes[i]]
        return sample_from(p if dist == "target" else residual(p, self.Q[self.prefixes[i]]), u)


def verify_round(P, Q, ctx, drafted, rng, rule="correct"):
    """The tokens one round emits (1 to k+1): walk the drafts, stop at the first rejection.

    rule: "correct", or one of the breakages in `verify_drafts`. One target call scores all
    k + 1 prefixes [ctx] + drafted; in a bigram table a prefix's distribution is its last token's row.
    """
    return verify_drafts(drafted, TableRows(P, Q, [ctx] + list(drafted)), rng, rule)[0]


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
    or the bonus after k hits): 1 to k + 1 tokens, one uniform per guess tested. Rounds continue
    until exactly n tokens are out: the last one keeps only the tokens still needed.
    """
    per_round, made = [], 0
    while made < n:
        hits = 0
        while hits < k and rng.random() < accuracy:
            hits += 1
        per_round.append(min(hits + 1, n - made))
        made += per_round[-1]
    return per_round


# --- notebook 04's graded tests of a student's round ---------------------------------

def scripted_round(verify, P, Q, ctx, drafted, uniforms, rule=None):
    """(tokens, uniforms drawn): verify(P, Q, ctx, drafted, rng[, rule=rule]) on scripted uniforms.

    Scripted uniforms make a round's answer exact. Twelve spare ones follow them, so that a round
    which draws too many still returns: its count, not a crash, shows the mistake. rule=None
    leaves the argument out (Exercise C is graded before the rules exist).
    """
    rng = ScriptedRNG(list(uniforms) + [0.5] * 12)
    extra = {} if rule is None else {"rule": rule}
    return list(verify(P, Q, ctx, list(drafted), rng, **extra)), rng.calls


def check_rounds(verify, P, drafts, rule, seed, cases, lesson, count_lesson):
    """Run `cases` random rounds through `verify` and verify_round on the same uniforms: same tokens,
    same number of uniforms drawn, or an AssertionError that teaches (lesson, count_lesson).

    Each case: a context, k = 1..5 drafted tokens from the next draft table of `drafts` in turn, and
    the uniforms a round can use (k + 1; one under greedy), all from default_rng(seed).
    """
    g = np.random.default_rng(seed)
    for case in range(cases):
        Q = drafts[case % len(drafts)]
        c, k = int(g.integers(len(P))), int(g.integers(1, 6))
        drafted = draft_tokens(Q, c, k, g)
        us = g.random(1 if rule == "greedy" else k + 1).tolist()
        want_rng = ScriptedRNG(us)
        want = verify_round(P, Q, c, drafted, want_rng, rule)
        got, used = scripted_round(verify, P, Q, c, drafted, us, None if rule == "correct" else rule)
        check_tokens(got, want, f"{rule} from {name(c)!r}, drafts {names(drafted)!r}, uniforms "
                                f"{[round(u, 4) for u in us]}: {lesson}")
        check_equal(used, want_rng.calls, count_lesson)
