"""Speculative decoding of notebook 10's trained transformers (speclab.transformer), with KV caches.

A model's cache holds a prefix of the text, and each forward feeds it the tokens it has not seen
yet, so the first call of a run is the prefill. After a round the target's cache holds the text
minus its last token (that token is fed with the next round's drafts), and so does the draft's, or
one token less when all k drafts were kept (the draft feeds `context[cache.length:]`).

Randomness follows the course contract (speclab.sampling): the k draft tokens, then position by
position an accept test and on rejection one residual sample, after k acceptances one bonus sample.
The round's logic is speclab.speculative.verify_drafts, the one copy every round in speclab runs.

Measurements: every timing is CPU time of the process (time.process_time), one BLAS thread, repeated
in interleaved passes and summarised by spread() (median and middle half): forward_times (a forward
against block size), generation_times (plain against speculative decoding, with the time inside the
forwards split out by Timed). damage_by_position measures a stale-cache loop's damage exactly on any
loop with the course's signature; KneserNey is the n-gram baseline of notebook 10's cross-entropies,
scored on held_out() text (code without its docstrings and comments).
"""
import time
from dataclasses import dataclass, field
from functools import lru_cache

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


# --- held-out text ------------------------------------------------------------------------------

def code_lines(text):
    """The lines of Python source that are code: docstrings (and other triple-quoted strings),
    comments and blank lines left out, so that a "held-out code" sample is not mostly English."""
    out, inside = [], None
    for line in text.splitlines():
        stripped = line.strip()
        if inside:
            if inside in stripped:
                inside = None
            continue
        for quote in ('"""', "\'\'\'"):
            if quote in stripped and stripped.count(quote) % 2 == 1:
                inside = quote
        if inside or not stripped or stripped.startswith("#") or stripped.startswith(('"""', "\'\'\'")):
            continue
        out.append(line)
    return "\n".join(out) + "\n"


@lru_cache(maxsize=None)
def _held_out_text(name):
    from .ngram import load_corpus
    text = load_corpus(name)
    return code_lines(text) if name == "code" else text


def held_out(name, chars=2048, start=0):
    """Tokens of notebook 08's corpora, which the models never saw in training: "code" is Python code
    with its docstrings and comments removed (data/corpora/code_stdlib.txt), "prose" the Jargon File's
    essays (prose_jargon.txt); `chars` characters from `start`."""
    from .transformer import encode
    return encode(_held_out_text(name)[start:start + chars])


# --- measurements ---------------------------------------------------------------------------------

def cross_entropy(model, tokens, keep=64):
    """Mean nats per character the model pays on tokens[keep:], each character predicted with at least
    `keep` characters before it in view: windows of CONTEXT tokens that overlap by `keep`, of which only
    the last CONTEXT - keep positions are scored (a fresh cache per window)."""
    from .transformer import CONTEXT
    tokens = list(tokens)
    step, losses = CONTEXT - keep, []
    for s in range(keep, len(tokens) - 1, step):
        window = tokens[s - keep:min(s + step + 1, len(tokens))]
        p = model.probs(window[:-1], model.new_cache())[keep - 1:]
        nxt = np.array(window[keep:])
        losses.append(-np.log(p[np.arange(len(nxt)), nxt]))
    return float(np.concatenate(losses).mean())


def cpu_time(fn):
    """CPU seconds of the process for one call of fn() (time.process_time: the time this process
    ran, not the time it waited for a machine busy with other work)."""
    start = time.process_time()
    fn()
    return time.process_time() - start


def cpu_time_per_call(fn):
    """CPU seconds of one call of fn(), calling it again until the clock has moved: where the process's
    CPU clock ticks coarsely (a grading run once read 0 s for a whole forward), the time of several
    calls, divided by their number, instead of a zero."""
    start, calls = time.process_time(), 0
    while True:
        fn()
        calls += 1
        elapsed = time.process_time() - start
        if elapsed > 0:
            return elapsed / calls


def interleaved(calls, repeat):
    """{label: array of `repeat` CPU-time measurements} of calls ({label: fn}): each pass runs every
    call once (cpu_time_per_call), in order, so that a slow moment of the machine hits all of them
    alike; one BLAS thread."""
    out = {label: [] for label in calls}
    with threadpool_limits(1):
        for _ in range(repeat):
            for label, fn in calls.items():
                out[label].append(cpu_time_per_call(fn))
    return {label: np.array(v) for label, v in out.items()}


def spread(values):
    """(median, 25th percentile, 75th percentile): the middle and the middle half of repeated measurements."""
    lo, mid, hi = np.percentile(values, [25, 50, 75])
    return float(mid), float(lo), float(hi)


def forward_times(models, sizes, repeat=15, at=64):
    """{(label, n): CPU seconds of one forward over n new tokens, one per pass} for models ({label:
    model}) with `at` tokens already cached; every (label, n) once per pass, interleaved (interleaved())."""
    calls = {}
    for label, model in models.items():
        cache = model.new_cache()
        model.forward(list(range(32, 32 + at)), cache)
        for n in sizes:
            def one(model=model, cache=cache, n=n):
                model.forward([65] * n, cache)
                cache.truncate(at)
            calls[label, n] = one
    return interleaved(calls, repeat)


class Timed:
    """A model that adds up the CPU time spent inside its forwards (.forward_seconds) and the positions
    they computed (.positions). probs() computes exactly what Transformer.probs does; its float64
    softmax counts as time outside the forward, as does everything else a decoding loop does."""

    def __init__(self, model):
        self.model, self.forward_seconds, self.positions, self.calls = model, 0.0, 0, 0

    def new_cache(self):
        return self.model.new_cache()

    def forward(self, tokens, cache):
        start = time.process_time()
        out = self.model.forward(tokens, cache)
        self.forward_seconds += time.process_time() - start
        self.positions += len(tokens)
        self.calls += 1
        return out

    def probs(self, tokens, cache, temperature=1.0):
        from .transformer import softmax
        return softmax(self.forward(tokens, cache).astype(np.float64) / temperature)


@dataclass
class Timing:
    """One timed generation: its Run (None for plain decoding) and its CPU seconds, in all and inside the
    target's and the draft's forwards."""
    run: object
    seconds: float
    target_seconds: float
    draft_seconds: float
    target_calls: int

    @property
    def outside(self):
        """Seconds outside every forward: sampling, the accept tests, the softmax, Python's bookkeeping."""
        return self.seconds - self.target_seconds - self.draft_seconds


def generation_times(target, drafts, prompt, n, repeat=5, seed=0):
    """{"plain": [Timing per pass], label: [...] for label in drafts}: `drafts` maps a label to (draft
    model, k or a drafter for speculative_generate's k). Each pass generates n tokens after `prompt`
    with every configuration, plain decoding first, seeded seed + pass, interleaved; CPU time, one BLAS thread."""
    out = {"plain": []} | {label: [] for label in drafts}
    with threadpool_limits(1):
        for r in range(repeat):
            for label in out:
                t = Timed(target)
                d = Timed(drafts[label][0]) if label != "plain" else None
                run = Run([]) if d is not None else None
                rng = np.random.default_rng(seed + r)
                if d is None:
                    seconds = cpu_time(lambda: plain_generate(t, prompt, n, rng))
                else:
                    seconds = cpu_time(lambda: speculative_generate(t, d, prompt, n, drafts[label][1], rng, run))
                out[label].append(Timing(run, seconds, t.forward_seconds, d.forward_seconds if d else 0.0, t.calls))
    return out


def speedups(times, label):
    """Measured speedups of `label` over plain decoding, one per pass (the two timed in the same pass)."""
    return np.array([p.seconds / s.seconds for p, s in zip(times["plain"], times[label])])


# --- the stale cache, measured on any loop --------------------------------------------------------

class _Recording:
    """A target that hands its rows out as usual and records, for every forward, the rows it returned
    and the tokens it was fed."""

    def __init__(self, model):
        self.model, self.calls = model, []

    def new_cache(self):
        return self.model.new_cache()

    def forward(self, tokens, cache):
        out = self.model.forward(tokens, cache)
        self.calls.append(([int(t) for t in tokens], out))
        return out

    def probs(self, tokens, cache, temperature=1.0):
        from .transformer import softmax
        return softmax(self.forward(tokens, cache).astype(np.float64) / temperature)


def damage_by_position(loop, target, draft, prompt, n, k, seed):
    """TV, at each of the n output positions, between the target distribution `loop` used to decide
    that token and the target's true next-token distribution after the text before it.

    `loop(target, draft, prompt, n, k, rng)` is any speculative loop that verifies with one target
    forward per round over (the tokens the target has not been fed) + the k drafts, the course's
    contract. Round r's rows come from its forward's last k + 1 rows; row i decided the round's i-th
    token. The true distributions come from one clean forward over the whole text. A correct loop
    scores float32 rounding (about 1e-7) everywhere: the floor of this measurement. Returns (tv, kept):
    an array of n TVs and the drafts each round kept."""
    from .transformer import softmax
    rec = _Recording(target)
    out = [int(t) for t in loop(rec, draft, list(prompt), n, k, np.random.default_rng(seed))]
    text = list(prompt) + out
    clean = target.probs(text[:-1], target.new_cache())[len(prompt) - 1:]
    tv, pos, rounds = np.full(n, np.nan), 0, []
    for tokens, logits in rec.calls:
        if pos >= n:
            break
        drafted = tokens[-k:]
        rows = softmax(logits[-(k + 1):].astype(np.float64))
        kept = 0
        while kept < k and pos + kept < n and out[pos + kept] == drafted[kept]:
            kept += 1
        for i in range(min(kept + 1, n - pos)):
            tv[pos + i] = tv_distance(rows[i], clean[pos + i])
        rounds.append(kept)
        pos += kept + 1
    return tv, rounds


def junk_in_cache(kept, k):
    """For each token a stale-cache loop emits, in order, how many rejected drafts sit in the target's
    cache when the rows that decided it are computed: round r's tokens (kept[r] + 1 of them) are decided
    by rows computed with the junk of the rounds before it, k - kept[s] for each earlier round s.
    The reference for notebook 10's Diagnose exercise."""
    out, junk = [], 0
    for a in kept:
        out += [junk] * (a + 1)
        junk += k - a
    return out


# --- a character n-gram with Kneser-Ney smoothing: the baseline a neural model must beat ------------

class KneserNey:
    """Interpolated Kneser-Ney over characters (Chen & Goodman 1998, section 3.5), counted with NumPy.

    Order N: the highest order uses counts, every lower order continuation counts (how many distinct
    characters precede an n-gram), one absolute discount per order D = n1 / (n1 + 2 n2), and the
    lowest order is interpolated with the uniform 1/V. Tokens are ints below V (ASCII codes here)."""

    def __init__(self, tokens, order, V=128):
        self.order, self.V = order, V
        ids = np.asarray(tokens, dtype=np.int64)
        grams = {m: self._codes(ids, m) for m in range(1, order + 1)}
        self.tables = {}
        for m in range(1, order + 1):
            if m == order:
                codes, counts = np.unique(grams[m], return_counts=True)
            else:   # continuation counts: distinct left neighbours of each m-gram
                longer = np.unique(grams[m + 1])
                codes, counts = np.unique(longer % V ** m, return_counts=True)
            n1, n2 = (counts == 1).sum(), (counts == 2).sum()
            D = n1 / (n1 + 2 * n2) if n1 + n2 else 0.5
            ctx, first = np.unique(codes // V, return_index=True)
            totals = np.add.reduceat(counts, first)
            types = np.diff(np.append(first, len(codes)))
            self.tables[m] = (codes, counts, ctx, totals, types, D)

    def _codes(self, ids, m):
        code = np.zeros(len(ids) - m + 1, dtype=np.int64)
        for j in range(m):
            code = code * self.V + ids[j:len(ids) - m + 1 + j]
        return code

    @staticmethod
    def _lookup(sorted_keys, values, keys):
        i = np.clip(np.searchsorted(sorted_keys, keys), 0, len(sorted_keys) - 1)
        return np.where(sorted_keys[i] == keys, values[i], 0)

    def next_probs(self, tokens):
        """p(tokens[i] | up to order - 1 characters before it) for every i >= 1: an array of len - 1."""
        ids = np.asarray(tokens, dtype=np.int64)
        pos = np.arange(1, len(ids))
        p = np.full(len(pos), 1.0 / self.V)
        for m in range(1, self.order + 1):
            codes, counts, ctx_keys, totals, types, D = self.tables[m]
            ok = pos >= m - 1                                  # a context of m - 1 characters exists
            c = np.zeros(len(pos), dtype=np.int64)
            for j in range(m - 1, 0, -1):
                c = c * self.V + np.where(ok, ids[np.maximum(pos - j, 0)], 0)
            gram = c * self.V + ids[pos]
            total = self._lookup(ctx_keys, totals, c)
            seen = ok & (total > 0)
            count = self._lookup(codes, counts, gram)
            mass = self._lookup(ctx_keys, types, c) * D
            safe = np.where(seen, total, 1)
            p = np.where(seen, np.maximum(count - D, 0) / safe + mass / safe * p, p)
        return p

    def cross_entropy(self, tokens, first=1):
        """Mean nats per character on tokens[first:] (realspec.cross_entropy scores tokens[keep:])."""
        return float(-np.log(self.next_probs(tokens)[first - 1:]).mean())
