"""Speculative decoding of a Llama with a KV cache (notebook 10): the loop, its drafts, its clock.

A model here is anything with SmolLM2's interface (speclab.models.smollm.Model: the real one, or tinyllama's):
`new_cache()`, and `forward(tokens, cache)` returning float32 logits (T, vocab) while the cache grows
by T. A draft is a deterministic function `draft(context, k) -> up to k tokens` (prompt lookup, or a
shallow copy of the target decoding greedily); a deterministic draft proposes x with q(x) = 1, so
notebook 02's rule min(1, p/q) keeps x with probability p(x), and notebook 03's residual
norm(max(0, p - q)) is p with x removed, renormalised (notebook 08 drafted this way from a table).

Randomness follows the course contract: position by position an accept test, on rejection one
residual sample, after all drafts are kept one bonus sample; `rng=None` is greedy (keep x iff it is the
target's argmax; emit the argmax), whose output is plain greedy decoding's, exactly.

Timing: CPU time of the process, one BLAS thread (see one_blas_thread), in interleaved passes,
summarised by spread() (median and middle half).
"""
import time
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..plumbing.pending import learner_first
from ..rules.sampling import sample_from


def softmax(logits):
    """Probabilities from logits, in float64 (the accept test compares u with them)."""
    z = np.asarray(logits, dtype=np.float64)
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def without(p, x):
    """The residual of a deterministic draft that proposed x: p with x removed, renormalised."""
    r = np.array(p, dtype=np.float64)
    r[x] = 0.0
    return r / r.sum()


# --- the round ----------------------------------------------------------------------------------

def verify_block(target, cache, fresh, drafted):
    """The target's k + 1 rows of logits, from ONE forward over fresh + drafted: after the text, after
    the text + drafted[:1], ..., after the text + drafted. `fresh` are the text's tokens the cache has
    not seen (the prompt, or the one token the last round emitted). The cache keeps all it was fed."""
    return target.forward(list(fresh) + list(drafted), cache)[len(fresh) - 1:]


def judge_drafts(drafted, logits, rng):
    """(emitted, kept): the drafts kept, then the correction or the bonus. Greedy when rng is None."""
    emitted = []
    for i, x in enumerate(drafted):
        if rng is None:
            best = int(np.argmax(logits[i]))
            emitted.append(best)
            if best != x:
                return emitted, i
            continue
        p = softmax(logits[i])
        if rng.random() < p[x]:
            emitted.append(int(x))
        else:
            emitted.append(int(sample_from(without(p, x), rng.random())))
            return emitted, i
    last = logits[len(drafted)]
    emitted.append(int(np.argmax(last)) if rng is None else int(sample_from(softmax(last), rng.random())))
    return emitted, len(drafted)


@dataclass
class Run:
    """Per round, how many drafts were proposed and kept."""
    drafted: list = field(default_factory=list)
    kept: list = field(default_factory=list)

    @property
    def rounds(self):
        return len(self.kept)

    @property
    def alpha(self):
        """Kept drafts over proposed drafts."""
        return sum(self.kept) / max(1, sum(self.drafted))

    @property
    def tokens_per_call(self):
        return (sum(self.kept) + self.rounds) / max(1, self.rounds)

    def kept_tokens(self, out):
        """The tokens of `out` (the run's output) that were drafted and kept, in order."""
        got, m = [], 0
        for kept in self.kept:
            got += list(out[m:m + kept])
            m += kept + 1
        return got


def speculative_generate(target, prompt, n, k, draft, rng=None, run=None, stale=False, cache=None):
    """n tokens after `prompt`, each round up to k drafts from draft(context, k) and one target forward,
    the target's cache then cut back to the accepted text. `cache` may hold a prefix of the prompt
    (at most all of it but its last token). stale=True is notebook 10's break-it: never cut back."""
    context = [int(t) for t in prompt]
    cache = target.new_cache() if cache is None else cache
    fresh = context[cache.length:]
    while len(context) - len(prompt) < n:
        drafted = [int(x) for x in draft(context, k)][:k]
        logits = verify_block(target, cache, fresh, drafted)
        emitted, kept = judge_drafts(drafted, logits, rng)
        if not stale:
            cache.truncate(len(context) + kept)          # drop the rejected drafts' keys and values
        context += emitted
        fresh = emitted[-1:]
        if run is not None:
            run.drafted.append(len(drafted))
            run.kept.append(kept)
    return context[len(prompt):len(prompt) + n]


def plain_greedy(target, prompt, n, cache=None):
    """n tokens of plain greedy decoding, one forward each (`cache` may hold a prefix of the prompt). Written on its
    own, not as speculative_generate with no drafts: a kernel grading notebook 10 has no course's loop to call."""
    context = [int(t) for t in prompt]
    cache = target.new_cache() if cache is None else cache
    fresh, out = context[cache.length:], []
    while len(out) < n:
        out.append(int(np.argmax(target.forward(fresh, cache)[-1])))
        fresh = out[-1:]
    return out


class Prefilled:
    """The target with a prompt's first tokens read once, as a server keeps a prompt's prefix cached: every new
    cache starts out holding them. A loop written for an empty cache (notebook 10's speculative_generate) feeds
    its first forward the whole prompt; that forward reads only what follows the prefix, and its rows for the
    prefix are the prefill's. So a learner's loop is timed on decoding alone, as plain_greedy given a copy of
    `cache` is. A forward that does not start with the prefix (a loop that reads cache.length) is passed on."""

    def __init__(self, target, prefix):
        self.target, self.prefix = target, [int(t) for t in prefix]
        self.cache = target.new_cache()
        self.rows = target.forward(self.prefix, self.cache, looped=False)
        self._unread = weakref.WeakSet()   # new caches not fed yet

    def new_cache(self):
        cache = self.cache.copy()
        self._unread.add(cache)
        return cache

    def forward(self, tokens, cache, looped=True):
        tokens, n = [int(t) for t in tokens], len(self.prefix)
        if cache in self._unread:
            self._unread.discard(cache)
            if len(tokens) > n and tokens[:n] == self.prefix:
                return np.concatenate([self.rows, self.target.forward(tokens[n:], cache, looped)])
        return self.target.forward(tokens, cache, looped)


# --- drafts ---------------------------------------------------------------------------------------

def no_draft(context, k):
    return []


def prompt_lookup(context, k, max_ngram=3):
    """Up to k tokens: what followed the latest earlier occurrence of the context's last n tokens,
    trying n = max_ngram first, then shorter; nothing when none of them occurred before."""
    context = list(context)
    for n in range(min(max_ngram, len(context) - 1), 0, -1):
        tail = context[-n:]
        for start in range(len(context) - n - 1, -1, -1):
            if context[start:start + n] == tail:
                return context[start + n:start + n + k]
    return []


class ShallowDraft:
    """Early exit as a draft: `shallow` (the target's first layers and its head) decodes k tokens greedily,
    with a cache of its own that it keeps for the text it shares with the last context it saw."""

    def __init__(self, shallow):
        self.shallow, self.cache, self.seen = shallow, shallow.new_cache(), []

    def __call__(self, context, k):
        same = 0
        for a, b in zip(self.seen, context):
            if a != b:
                break
            same += 1
        self.cache.truncate(min(self.cache.length, same, len(context) - 1))
        text, out = list(context), []
        for _ in range(k):
            out.append(int(np.argmax(self.shallow.forward(text[self.cache.length:], self.cache)[-1])))
            text.append(out[-1])
        self.seen = text[:self.cache.length]
        return out


def replay(greedy_out, prompt, k, draft):
    """The Run of speculative greedy decoding, without the target: its output IS greedy_out, so each
    round keeps the drafts that match it and emits one more. Drafts that read only the context (prompt
    lookup) cost nothing here; this is how every (task, k) of notebook 10's widget is priced."""
    run, context, m = Run(), list(prompt), 0
    while m < len(greedy_out):
        drafted = [int(x) for x in draft(context, k)][:k]
        kept = 0
        while kept < len(drafted) and m + kept < len(greedy_out) and drafted[kept] == greedy_out[m + kept]:
            kept += 1
        run.drafted.append(len(drafted))
        run.kept.append(kept)
        context += greedy_out[m:m + kept + 1]
        m += kept + 1
    return run


# --- the learner's loop and draft in notebook 10's demos ----------------------------------------------
# The notebook hands in the learner's functions; the course's stand in while they are unsolved, so a fresh student
# copy shows every table and widget. A kernel grading notebook 10 has no course's to fall back on
# (grading/kernels/hidden.py): there an unsolved one ends in needs' one line.

def your_lookup(learner):
    """The learner's prompt_lookup once Exercise C is solved, the course's until then."""
    return learner_first(learner, prompt_lookup)


def your_loop(learner):
    """The learner's speculative_generate once Exercises A and B are solved, the course's until then; called as
    the learner's is: (target, prompt, n, k, draft, rng=None)."""
    return learner_first(learner, speculative_generate)


# --- the break-it's measurements -------------------------------------------------------------------

def stale_cache_tv(target, context, rejected):
    """TV between the target's next-token distributions after `context`, with `rejected` left in the
    cache after context[:-1] and without."""
    clean = target.new_cache()
    if len(context) > 1:
        target.forward(list(context[:-1]), clean)
    stale = clean.copy()
    if len(rejected):
        target.forward(list(rejected), stale)
    p = softmax(target.forward(list(context[-1:]), clean)[0])
    p_stale = softmax(target.forward(list(context[-1:]), stale)[0])
    return float(0.5 * np.abs(p - p_stale).sum())


class Recording:
    """A model that keeps what each of its forwards was fed and the logits it returned, in order."""

    def __init__(self, model):
        self.model, self.passes = model, []

    def new_cache(self):
        return self.model.new_cache()

    def forward(self, tokens, cache, looped=True):
        out = self.model.forward(tokens, cache, looped)
        self.passes.append((list(tokens), out))
        return out


def damage_by_position(loop, target, prompt, n, k, draft):
    """(TV by position, Run): for each of the n greedy tokens `loop` (the course's signature) wrote, the
    TV between the target row that decided it and the true row after the text before it; and the rounds
    (drafts proposed and kept). The rows used are read off the verify passes (the first fed the whole
    prompt, each later one the last emitted token); the true ones come from one clean forward."""
    rec = Recording(target)
    out = loop(rec, list(prompt), n, k, draft)
    used, run = [], Run()
    for i, (fed, rows) in enumerate(rec.passes):
        fresh = len(prompt) if i == 0 else 1
        drafted, rows = fed[fresh:], rows[fresh - 1:]
        kept = 0
        while kept < len(drafted) and drafted[kept] == int(np.argmax(rows[kept])):
            kept += 1
        used.extend(rows[:kept + 1])
        run.drafted.append(len(drafted))
        run.kept.append(kept)
    used = used[:len(out)]
    true = target.forward(list(prompt) + list(out[:-1]), target.new_cache())[len(prompt) - 1:]
    return np.array([0.5 * np.abs(softmax(u) - softmax(t)).sum() for u, t in zip(used, true)]), run


# --- the clock --------------------------------------------------------------------------------------

def one_blas_thread():
    """Pin NumPy's BLAS to one thread for good. A decode step is a few hundred matrix-vector products;
    two threads on a shared 2-core machine spin while they wait for each other, which makes CPU time
    erratic and larger, never smaller."""
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)


def cpu_time(fn):
    """CPU seconds of the process for one call of fn() (time.process_time: the time this process ran)."""
    start = time.process_time()
    fn()
    return time.process_time() - start


def interleaved(calls, repeat):
    """{label: array of `repeat` CPU times} of calls ({label: fn}): each pass runs every call once, in
    order, so that a slow moment of the machine hits all of them alike."""
    out = {label: [] for label in calls}
    for _ in range(repeat):
        for label, fn in calls.items():
            out[label].append(cpu_time(fn))
    return {label: np.array(v) for label, v in out.items()}


def spread(values):
    """(median, 25th percentile, 75th percentile) of repeated measurements."""
    lo, mid, hi = np.percentile(values, [25, 50, 75])
    return float(mid), float(lo), float(hi)


def forward_times(model, sizes, repeat=3, at=32):
    """{(looped, n): CPU seconds of one forward over n new tokens with `at` tokens cached}, interleaved;
    sizes: {looped: [n, ...]} (True: one matrix-vector product per row, False: x @ W)."""
    cache = model.new_cache()
    model.forward(list(range(1, at + 1)), cache)
    calls = {}
    for how, ns in sizes.items():
        for n in ns:
            def one(how=how, n=n):
                model.forward([7] * n, cache, looped=how)
                cache.truncate(at)
            calls[how, n] = one
    return interleaved(calls, repeat)


def predicted_speedup(run, ratio, c=0.0):
    """Tokens per call over a round's price kc + t(k+1)/t(1), with each round priced at the k it
    drafted: ratio[n] is t(n)/t(1), c the cost of one drafted token in target steps."""
    rounds = len(run.kept)
    price = sum(ratio[d + 1] + c * d for d in run.drafted) / max(1, rounds)
    return run.tokens_per_call / price


def bandwidth(megabytes=256, repeat=3):
    """Bytes per CPU second a matrix-vector product streams through a float32 matrix far larger than any
    cache: the memory bandwidth a decode step can use (the median of `repeat` products)."""
    cols = 4096
    W = np.ones((megabytes * 2**20 // (4 * cols), cols), np.float32)
    x = np.ones(cols, np.float32)
    W @ x                                   # touch every page once before timing
    return W.nbytes / float(np.median([cpu_time(lambda: W @ x) for _ in range(repeat)]))


# --- early exit: the target's first layers as a draft (model.exit_at(L), speclab.models.smollm.Model) ----------

def exit_guesses(model, tokens, layers, last):
    """{L: the argmax after the first L blocks, then the final norm and head, at the last `last` positions of
    `tokens`}: one teacher-forced forward, the head read after each L (L = model.n_layers: the full model)."""
    cache, x, guesses = model.new_cache(), model.embed(tokens), {}
    for layer in range(model.n_layers):
        x = model.block(layer, x, cache, 0, False)
        if layer + 1 in layers:
            guesses[layer + 1] = np.argmax(model.head(x[-last:]), axis=1)
    return guesses


def exit_agreement(model, tokens, layers, last):
    """{L: the share of the last `last` positions of `tokens` where the exit after L blocks guesses the full
    model's argmax}."""
    guesses = exit_guesses(model, tokens, set(layers) | {model.n_layers}, last)
    return {L: float(np.mean(guesses[L] == guesses[model.n_layers])) for L in layers}
