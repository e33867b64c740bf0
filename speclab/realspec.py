"""Speculative decoding of notebook 10's trained transformers (speclab.transformer), with KV caches.

A model's cache holds a prefix of the text, and each forward feeds it the tokens it has not seen
yet, so the first call of a run is the prefill. After a round the target's cache holds the text
minus its last token (that token is fed with the next round's drafts), and so does the draft's, or
one token less when all k drafts were kept (the draft feeds `context[cache.length:]`).

Randomness follows the course contract (speclab.sampling): the k draft tokens, then position by
position an accept test and on rejection one residual sample, after k acceptances one bonus sample.
The round's logic is speclab.speculative.verify_drafts, the one copy every round in speclab runs.
"""
import time
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from .sampling import sample_from
from .speculative import accept_prob, residual, tv_distance, verify_drafts


# --- the pieces of a round ----------------------------------------------------------------------

def draft_block(draft, cache, context, k, rng):
    """(drafted, q): k tokens sampled from `draft` after `context` (k uniforms), and the k draft
    distributions they were drawn from, shape (k, V). The cache ends holding context + drafted[:-1]."""
    q = draft.probs(context[cache.length:], cache)[-1]
    drafted, rows = [], []
    for j in range(k):
        x = sample_from(q, rng.random())
        drafted.append(x)
        rows.append(q)
        if j < k - 1:
            q = draft.probs([x], cache)[0]
    return drafted, np.array(rows)


def verify_block(target, cache, fresh, drafted):
    """The target's k + 1 next-token distributions, shape (k + 1, V): after the text, after the text
    + drafted[:1], ..., after the text + drafted, from ONE forward over fresh + drafted. `fresh` are
    the text's tokens the cache has not seen (the whole prompt in the first round, then the one token
    the last round emitted). The cache ends holding everything it was fed."""
    return target.probs(list(fresh) + list(drafted), cache)[len(fresh) - 1:]


class BlockRows:
    """verify_drafts' rows from arrays: p (k + 1, V) of the target, q (k, V) of the draft."""

    def __init__(self, p, q):
        self.p, self.q = p, q

    def keep(self, i, x):
        return accept_prob(self.p[i], self.q[i], x)

    def favourite(self, i):
        return int(np.argmax(self.p[i]))

    def sample(self, i, dist, u):
        return sample_from(self.p[i] if dist == "target" else residual(self.p[i], self.q[i]), u)


@dataclass
class Run:
    """What a run emitted, and per round how many drafts were made and kept."""
    tokens: list
    drafted: list = field(default_factory=list)   # k of each round
    kept: list = field(default_factory=list)      # accepted drafts of each round
    log: list = field(default_factory=list)       # (text before the round, drafted, emitted) per round

    @property
    def rounds(self):
        return len(self.kept)

    @property
    def tokens_per_call(self):
        return (sum(self.kept) + self.rounds) / max(1, self.rounds)


def speculative_generate(target, draft, prompt, n, k, rng, run=None, stale=False):
    """n tokens after `prompt`: rounds of k drafts and one target forward, both caches rolled back
    to the accepted text after each round. Returns the list of n tokens (the last round's surplus
    is dropped). `run`, a Run, collects per-round counts. `k` may be a function
    (draft, cache, context, rng) -> (drafted, q) that drafts a variable number (adaptive k).
    stale=True is notebook 10's break-it: the target's cache is never rolled back."""
    context, start, fresh = list(prompt), len(prompt), list(prompt)
    tc, dc = target.new_cache(), draft.new_cache()
    while len(context) - start < n:
        drafted, q = k(draft, dc, context, rng) if callable(k) else draft_block(draft, dc, context, k, rng)
        p = verify_block(target, tc, fresh, drafted)
        emitted, kept = verify_drafts(drafted, BlockRows(p, q), rng)
        if run is not None:
            run.log.append((list(context), list(drafted), list(emitted)))
        if not stale:
            tc.truncate(tc.length - len(drafted) + kept)     # drop the rejected drafts' keys and values
        dc.truncate(min(dc.length, len(context) + kept))
        context += emitted
        fresh = emitted[-1:]
        if run is not None:
            run.drafted.append(len(drafted))
            run.kept.append(kept)
    out = context[start:start + n]
    if run is not None:
        run.tokens = out
    return out


def plain_generate(target, prompt, n, rng):
    """n tokens sampled from the target one forward at a time (one uniform each)."""
    context, cache = list(prompt), target.new_cache()
    for _ in range(n):
        p = target.probs(context[cache.length:], cache)[-1]
        context.append(sample_from(p, rng.random()))
    return context[len(prompt):]


def confident_draft(draft, cache, context, k_max, threshold, rng):
    """(drafted, q) as draft_block, but adaptive: 1 to k_max tokens, stopping right after a token x
    that the draft gave q[x] < threshold (the draft is unsure of its own guess). One uniform per
    drafted token; threshold = 0 drafts k_max tokens, exactly as draft_block(..., k_max, rng).
    Notebook 10's exercise; the cache ends holding context + drafted[:-1]."""
    q = draft.probs(context[cache.length:], cache)[-1]
    drafted, rows = [], []
    while True:
        x = sample_from(q, rng.random())
        drafted.append(x)
        rows.append(q)
        if len(drafted) == k_max or q[x] < threshold:
            return drafted, np.array(rows)
        q = draft.probs([x], cache)[0]


def confident_block(k_max, threshold, drafter=confident_draft):
    """A drafter for speculative_generate's `k`: (draft, cache, context, rng) -> (drafted, q) by
    `drafter` (confident_draft's signature; pass a learner's own to run theirs)."""
    def block(draft, cache, context, rng):
        return drafter(draft, cache, context, k_max, threshold, rng)
    return block


# --- measurements ---------------------------------------------------------------------------------

def teacher_forced(model, tokens):
    """The model's next-token distributions at every position of `tokens` (fresh cache, one pass
    per window of at most the context length): shape (len(tokens), V); row i follows tokens[:i+1]."""
    from .transformer import CONTEXT
    rows = []
    for s in range(0, len(tokens), CONTEXT):
        rows.append(model.probs(tokens[s:s + CONTEXT], model.new_cache()))
    return np.concatenate(rows)


def acceptance_by_position(target, draft, tokens):
    """sum(min(p, q)) at each position of `tokens` (both models teacher-forced on the same text)."""
    return np.minimum(teacher_forced(target, tokens), teacher_forced(draft, tokens)).sum(axis=1)


def cross_entropy(model, tokens):
    """Mean nats per character the model pays on `tokens` (each window starts a fresh cache)."""
    p = teacher_forced(model, tokens)[:-1]
    return float(-np.log(p[np.arange(len(p)), tokens[1:]]).mean())


def stale_positions(run):
    """[(context, rejected)] for every round of `run` that ended in a rejection: the text after that
    round, and the drafts a decoder that forgets the rollback leaves in the target's cache (the
    rejected draft and every draft after it)."""
    out = []
    for before, drafted, emitted in run.log:
        kept = len(emitted) - 1
        if kept < len(drafted):
            out.append((before + emitted, drafted[kept:]))
    return out


def stale_cache_tv(target, context, rejected):
    """TV between the target's next-token distribution after `context` with a clean cache, and
    with a cache that also holds `rejected` (the rejected drafts a decoder forgot to roll back)
    after context[:-1]: the damage of notebook 10's break-it at one position."""
    clean = target.new_cache()
    target.forward(context[:-1], clean)
    stale = clean.copy()
    target.forward(rejected, stale)
    return tv_distance(target.probs(context[-1:], clean)[0], target.probs(context[-1:], stale)[0])


def forward_seconds(model, n_tokens, at=64, repeat=9):
    """Median seconds of one forward over n_tokens new tokens with `at` tokens already cached
    (one BLAS thread; the cache is rolled back between repeats)."""
    cache = model.new_cache()
    model.forward(list(range(32, 32 + at)), cache)
    times = []
    with threadpool_limits(1):
        for _ in range(repeat):
            t = time.perf_counter()
            model.forward([65] * n_tokens, cache)
            times.append(time.perf_counter() - t)
            cache.truncate(at)
    return float(np.median(times))


def time_generation(fn, repeat=5):
    """Seconds of fn() for each of `repeat` runs, one BLAS thread."""
    out = []
    with threadpool_limits(1):
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t)
    return out


def tokens_per_second(target, draft, prompt, n, ks, repeat=3, seed=0):
    """{"plain": [tokens/s per repeat], k: [...] for k in ks}: the runs interleaved (plain, k=ks[0],
    ..., then again), one BLAS thread, each run seeded the same (seed + repeat index)."""
    out = {"plain": []} | {k: [] for k in ks}
    with threadpool_limits(1):
        for r in range(repeat):
            for key in out:
                rng = np.random.default_rng(seed + r)
                t = time.perf_counter()
                if key == "plain":
                    plain_generate(target, prompt, n, rng)
                else:
                    speculative_generate(target, draft, prompt, n, key, rng)
                out[key].append(n / (time.perf_counter() - t))
    return out


def timed_runs(target, draft, prompt, n, drafters, seeds):
    """{label: [(Run, tokens per second) for each seed]} for `drafters` ({label: k or a drafter for
    speculative_generate's `k`}), the runs interleaved (every label with seed 0, then seed 1, ...) so
    that a slow moment of the machine hits them all alike; one BLAS thread."""
    out = {label: [] for label in drafters}
    with threadpool_limits(1):
        for seed in seeds:
            for label, k in drafters.items():
                run = Run([])
                t = time.perf_counter()
                speculative_generate(target, draft, prompt, n, k, np.random.default_rng(seed), run)
                out[label].append((run, n / (time.perf_counter() - t)))
    return out
