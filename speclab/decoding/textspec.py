"""Speculative generation for models that are functions of the whole context (notebook 08).

speclab.rules.speculative.verify_round works on V x V tables indexed by the current token. A real
language model is a function: model(context) -> length-V next-token distribution, where the
context is the whole list of token ids so far. The round is the same, with every table row
P[t] replaced by a call: p_i = target(context + drafted[:i]), q_i = draft(context + drafted[:i]).

Randomness: the course contract (speclab.rules.sampling): one rng.random() per drafted token, then
position by position one per accept test and, on rejection, one for the residual sample;
after k acceptances one for the bonus token from the target.

    draft_tokens(draft, context, k, rng) -> list of k ids
    verify_round(target, draft, context, drafted, rng, rule="correct") -> emitted ids
    play_round(...) -> (emitted ids, kinds): kinds[i] in "accepted", "resampled", "bonus" ("stale")
    generate(target, draft, context, n, k, rng) -> Generation (tokens, kinds, rounds;
                                                 .kept_fraction, .tokens_per_call, .round_starts)
    lookup_draft(g, fallback=None) -> a draft model that copies from earlier in the context
    onehot_residual(p, x) -> p with x removed, renormalised
    first_two_frequencies(target, draft, context, k, trials, rng, rule) -> V x V empirical joint
    exact_first_two(target, context) -> V x V exact joint of the target's next two tokens
    tv_bound(J, trials, fail=1e-7) -> a TV threshold a correct sampler exceeds with prob < fail
    seconds_per_call(model, contexts) -> seconds of one model call (fastest pass)
    cost_ratio(draft, target, contexts) -> c, the draft's cost per call relative to the target's
"""
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..rules.sampling import sample_from
from ..rules.speculative import accept_prob, residual, verify_drafts


def _tail(context, *models):
    """The end of the context that the models read: all of it, unless every model says how many trailing
    tokens it reads (a `window`, as speclab.models.ngram's models do). Copying a long context into every call's
    prefix would cost more than the call; the models see the same tokens either way."""
    windows = [getattr(m, "window", None) for m in models]
    if None in windows:
        return list(context)
    return list(context[len(context) - max(windows):]) if max(windows) else []


def draft_tokens(draft, context, k, rng):
    """k tokens from the draft, each sampled after the ones before it (k uniforms)."""
    ctx, out = _tail(context, draft), []
    for _ in range(k):
        x = sample_from(draft(ctx), rng.random())
        out.append(x)
        ctx.append(x)
    return out


class ModelRows:
    """The distributions a round reads from models of the whole context: at prefix i,
    target(context + drafted[:i]) and draft(context + drafted[:i]), each called once, when first needed."""

    def __init__(self, target, draft, context, drafted):
        self.models, self.context, self.seen = (target, draft), _tail(context, target, draft), {}
        self.drafted = [int(x) for x in drafted]

    def _dist(self, which, i):
        if (which, i) not in self.seen:
            self.seen[which, i] = self.models[which](self.context + self.drafted[:i])
        return self.seen[which, i]

    def keep(self, i, x):
        return accept_prob(self._dist(0, i), self._dist(1, i), x)

    def favourite(self, i):
        return int(np.argmax(self._dist(0, i)))

    def sample(self, i, dist, u):
        p = self._dist(0, i)
        return sample_from(p if dist == "target" else residual(p, self._dist(1, i)), u)


def play_round(target, draft, context, drafted, rng, rule="correct"):
    """(emitted, kinds): the tokens one verify pass emits, and how each came about.

    The round is speclab.rules.speculative.verify_drafts, the same as on tables; kinds[i] is "accepted",
    "resampled" (the fix-up after a rejection), "bonus", or "stale" (rule "continue" only).
    """
    out, stop = verify_drafts(drafted, ModelRows(target, draft, context, drafted), rng, rule)
    kinds = ["accepted"] * stop + ["bonus" if stop == len(drafted) else "resampled"]
    return out, kinds + ["stale"] * (len(out) - len(kinds))


def verify_round(target, draft, context, drafted, rng, rule="correct"):
    """The tokens one round emits (1 to k+1); the reference for notebook 08's exercise."""
    return play_round(target, draft, context, drafted, rng, rule)[0]


@dataclass
class Generation:
    tokens: list = field(default_factory=list)   # every emitted id, in order
    kinds: list = field(default_factory=list)    # "accepted" / "resampled" / "bonus", one per token
    rounds: list = field(default_factory=list)   # tokens emitted by each round (= each target call)
    k: int = 0

    @property
    def accepted(self):
        return self.kinds.count("accepted")

    @property
    def kept_fraction(self):
        """Drafts kept / drafts made, over the whole run. Not alpha: it falls with k by construction
        (a draft is only tested if every draft before it in its round was kept)."""
        return self.accepted / (len(self.rounds) * self.k)

    @property
    def accept_rate(self):
        """The kept fraction, under its old name (kept so that older code still runs)."""
        return self.kept_fraction

    @property
    def round_starts(self):
        """The index in .tokens of the first token of every round."""
        return np.concatenate([[0], np.cumsum(self.rounds[:-1], dtype=int)]).astype(int).tolist()

    @property
    def tokens_per_call(self):
        return sum(self.rounds) / len(self.rounds)


def generate(target, draft, context, n, k, rng, rule="correct"):
    """Speculative generation of at least n tokens after context; every round is recorded."""
    ctx, gen = list(context), Generation(k=k)
    while len(gen.tokens) < n:
        drafted = draft_tokens(draft, ctx, k, rng)
        out, kinds = play_round(target, draft, ctx, drafted, rng, rule)
        ctx.extend(out)
        gen.tokens.extend(out)
        gen.kinds.extend(kinds)
        gen.rounds.append(len(out))
    return gen


def sample_plain(target, context, n, rng):
    """n tokens from the target alone, one call and one uniform each."""
    ctx = list(context)
    for _ in range(n):
        ctx.append(sample_from(target(ctx), rng.random()))
    return ctx[len(context):]


# --- prompt lookup: the draft copies a continuation from earlier in the context ----------

def lookup_next(context, g, data=None):
    """The token after the most recent earlier occurrence of the context's last n tokens, or None.

    Tries n = g first, then shorter suffixes down to 1 (longest match wins), as prompt-lookup
    decoding does. `data`, if given, is bytes(context), already made.
    """
    n = len(context)
    if data is None:
        data = bytes(context)   # ids < 256: as a byte string, each search is one rfind
    for m in range(min(g, n - 1), 0, -1):
        j = data.rfind(data[n - m:], 0, n - 1)
        if j >= 0:
            return data[j + m]
    return None


class _ContextBytes:
    """bytes(context), made from the last context's bytes when the new context extends it or is a prefix
    of it, as a generation's contexts do: comparing and copying lists of ids is several times faster than
    converting every id again (a context of 5,000 ids: about 12 microseconds against 47)."""

    def __init__(self):
        self.ids, self.data = [], b""

    def of(self, ids):
        n, m = len(self.ids), len(ids)
        if m < n and ids == self.ids[:m]:
            return self.data[:m]
        data = self.data + bytes(ids[n:]) if m >= n and ids[:n] == self.ids else bytes(ids)
        self.ids, self.data = list(ids), data
        return data


def lookup_draft(g, V, fallback=None):
    """A draft model that copies: one-hot on lookup_next(context, g); `fallback` (or uniform) if no match."""
    known = _ContextBytes()

    def draft(context):
        ids = context if isinstance(context, list) else [int(t) for t in context]
        x = lookup_next(ids, g, known.of(ids))
        if x is None:
            return fallback(context) if fallback is not None else np.full(V, 1.0 / V)
        q = np.zeros(V)
        q[x] = 1.0
        return q
    return draft


def onehot_residual(p, x):
    """norm(max(0, p - onehot(x))) in closed form: p with x removed, renormalised (p if p[x] = 1)."""
    r = np.array(p, dtype=float)
    r[x] = 0.0
    s = r.sum()
    return r / s if s > 0 else np.asarray(p, dtype=float)


# --- exactness ---------------------------------------------------------------------------

def first_two_frequencies(target, draft, context, k, trials, rng, rule="correct"):
    """V x V empirical joint of the first two tokens speculative generation emits, over `trials` runs."""
    V = len(target(list(context)))
    counts = np.zeros((V, V))
    for _ in range(trials):
        gen = generate(target, draft, context, 2, k, rng, rule)
        counts[gen.tokens[0], gen.tokens[1]] += 1
    return counts / trials


def plain_first_two(target, context, trials, rng):
    """The same joint from the target sampled directly: the sampling-noise floor.

    The trials of sample_plain(target, context, 2, rng), all at once: the same uniforms in the same order
    (rng.random((trials, 2)) is the stream of 2 * trials calls of rng.random()), each turned into a token
    by sample_from's inverse CDF, so the same tokens, in a few NumPy calls instead of a loop of trials.
    """
    ctx = list(context)
    p = np.asarray(target(ctx), dtype=float)
    V = len(p)
    u = rng.random((trials, 2))
    first = _inverse_cdf(p, u[:, 0])
    counts = np.zeros((V, V))
    for a in np.unique(first):
        second = _inverse_cdf(np.asarray(target(ctx + [int(a)]), dtype=float), u[first == a, 1])
        counts[a] = np.bincount(second, minlength=V)
    return counts / trials


def _inverse_cdf(p, u):
    """sample_from(p, u) for every uniform in the array u: the smallest i with cumsum(p)[i] > u."""
    cdf = p.cumsum()   # the sums sample_from makes, in the same order
    i = cdf.searchsorted(u, side="right")
    return np.where(i < len(p), i, np.flatnonzero(p > 0)[-1])


def exact_first_two(target, context):
    """J[a, b] = p(a | context) * p(b | context + [a]), over the tokens with p(a) > 0."""
    ctx = list(context)
    p = target(ctx)
    J = np.zeros((len(p), len(p)))
    for a in np.flatnonzero(p):
        J[a] = p[a] * target(ctx + [int(a)])
    return J


def tv_bound(J, trials, fail=1e-7):
    """A threshold for TV(empirical joint of `trials` samples, J) that a correct sampler exceeds w.p. < fail.

    Cell by cell E|emp - J| <= min(2 J, sqrt(J (1 - J) / trials)) (the triangle inequality; Jensen),
    so E[TV] <= 0.5 * sum of those; and TV moves by at most
    1/trials when one sample changes, so McDiarmid gives P(TV > E[TV] + t) <= exp(-2 trials t^2);
    t = sqrt(ln(1/fail) / (2 trials)).
    """
    J = np.asarray(J, dtype=float)
    mean = 0.5 * float(np.minimum(2 * J, np.sqrt(J * (1 - J) / trials)).sum())
    return mean + math.sqrt(math.log(1 / fail) / (2 * trials))


def seconds_per_call(model, contexts, repeat=7):
    """The fastest of `repeat` passes: mean CPU seconds of one uncached model call over the contexts.

    CPU time (time.process_time) leaves out the time this process waits for a busy machine,
    and the fastest pass is the least disturbed by what else runs.
    """
    call = getattr(model, "uncached", model)
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for c in contexts:
            call(c)
        times.append((time.process_time() - start) / len(contexts))
    return float(min(times))


def cost_ratio(draft, target, contexts, repeat=9):
    """c = (seconds per draft call) / (seconds per target call), timed in alternating passes.

    Alternating the two and keeping each one's fastest pass makes the ratio robust to a
    machine whose load changes while it is measured.
    """
    t_draft, t_target = [], []
    for _ in range(repeat):
        t_target.append(seconds_per_call(target, contexts, repeat=1))
        t_draft.append(seconds_per_call(draft, contexts, repeat=1))
    if min(t_draft) > 0 and min(t_target) > 0:
        return min(t_draft) / min(t_target)
    # A coarse CPU clock (a sandbox's, under load) can read 0 for a pass of a few milliseconds: then the
    # totals of all passes, and if even those read 0, longer passes.
    if sum(t_draft) > 0 and sum(t_target) > 0:
        return sum(t_draft) / sum(t_target)
    return cost_ratio(draft, target, list(contexts) * 4, repeat)


# --- showing a generation ------------------------------------------------------------------

def coloured_html(tokens, kinds, alpha, colors):
    """Generated text as HTML, each character coloured by how it came out (accepted/resampled/bonus)."""
    import html
    spans = []
    for t, kind in zip(tokens, kinds):
        ch = html.escape(alpha[int(t)])
        spans.append(f'<span style="color:{colors[kind]}">{ch}</span>')
    legend = " ".join(f'<span style="color:{colors[k]};font-weight:bold">{k}</span>'
                      for k in ("accepted", "resampled", "bonus"))
    return (f'<div style="font-size:11px">{legend}</div>'
            f'<pre style="white-space:pre-wrap;font-size:12px;line-height:1.35;margin:0">{"".join(spans)}</pre>')


def damage_from_copies(px):
    """Notebook 08's break-it diagnosis: the mean TV per position between what the resample-p shortcut emits
    and p, from the target's probabilities px of the proposed copies alone. Only the copy x gains (it comes
    out with p(x) + (1 - p(x)) p(x)); every other token loses the factor 1 - p(x), so one position's TV is
    p(x) (1 - p(x)), whatever the rest of p."""
    px = np.asarray(px, dtype=float)
    return float(np.mean(px * (1 - px)))
