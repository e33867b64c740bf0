"""Character n-gram models over one shared alphabet: notebook 08's real (small) language models.

A model of order n predicts the next character from the n - 1 before it. It keeps one
table per context length m = 0 .. n-1:

    tables[m][context] = counts of each next token after that context
                         (context: a tuple of m token ids; value: a length-V float array)

and mixes them with Witten-Bell interpolation, from a uniform base up:

    p_{-1}(x)     = 1 / V
    p_m(x | c)    = (count(c, x) + T(c) * p_{m-1}(x)) / (N(c) + T(c))   if c was seen
                  = p_{m-1}(x)                                           if it was not
    N(c) = how often c was seen,  T(c) = how many distinct tokens followed it.

T(c) / (N(c) + T(c)) is the chance that c is followed by something new, and that is the
weight the shorter context gets. Every probability is at least (1/V) * prod of those weights,
so none is zero. Token ids index one shared alphabet: the draft and the target must give
p[i] and q[i] for the same character i, or p(x)/q(x) compares two different characters.

    alphabet(*texts) -> str            every character of the texts, sorted
    encode(text, alphabet) -> array    token ids;   decode(ids, alphabet) -> str
    next_counts(ids, m, V, gap=0)      one table (vectorised with NumPy); gap skips tokens
    ngram_dist(tables, context, V)     the interpolated next-token distribution
    NGram(ids, order, V)               a model: NGram(...)(context) -> length-V array
    build_tables(ids, max_order, V)    tables[0 .. max_order-1], to share between models
    load_corpus(name)                  the text of data/corpora/<name>.txt

The course's two corpora, counted once per process (notebook 08 and its widget share them):

    shared_alphabet()                  every character of both corpora, sorted
    corpus_ids(name)                   a corpus as token ids over the shared alphabet
    corpus_tables(name)                its tables for m = 0 .. CORPUS_MAX_ORDER-1
    corpus_model(name, order)          one CorpusModel per (corpus, order), its memo kept warm
"""
import gc
from contextlib import contextmanager
from functools import lru_cache

import numpy as np

from ..plumbing.datafiles import DATA

CORPORA = DATA / "corpora"
CORPUS_FILES = {"prose": "prose_jargon.txt", "code": "code_stdlib.txt"}


def load_corpus(name):
    """The text of one corpus: "prose" (The Jargon File) or "code" (Python's standard library)."""
    return (CORPORA / CORPUS_FILES.get(name, f"{name}.txt")).read_text(encoding="ascii")


def alphabet(*texts):
    """One sorted string of every character that occurs in any of the texts."""
    return "".join(sorted(set().union(*map(set, texts))))


def encode(text, alpha):
    """The token ids of text over the alphabet alpha (a ValueError names a missing character)."""
    index = {ch: i for i, ch in enumerate(alpha)}
    try:
        return np.array([index[ch] for ch in text], dtype=np.int64)
    except KeyError as err:
        raise ValueError(f"character {err.args[0]!r} is not in the alphabet") from None


def decode(ids, alpha):
    return "".join(alpha[int(i)] for i in ids)


def next_counts(ids, m, V, gap=0):
    """{context (tuple of m ids): length-V float array of next-token counts}, over every position.

    The context of position i is ids[i-gap-m:i-gap]; positions without a full context are skipped.
    m = 0 gives {(): the count of every token}. With gap > 0 the `gap` tokens between the context
    and the counted token are not seen (gap = 1 counts the token after next: a model that drafts
    without seeing the last token). Vectorised: the contexts are packed into base-V integers and
    counted with np.unique.
    """
    contexts, table = _count_rows(ids, m, V, gap)
    return dict(zip(contexts, table))


def _count_rows(ids, m, V, gap=0):
    """next_counts as (the contexts, each a tuple of m ids; one 2-D array, one row of counts per context)."""
    ids = np.asarray(ids, dtype=np.int64)
    n = len(ids) - m - gap
    if n <= 0:
        return [], np.zeros((0, V))
    key = np.zeros(n, dtype=np.int64)
    for j in range(m):
        key = key * V + ids[j:j + n]
    pairs, counts = np.unique(key * V + ids[m + gap:], return_counts=True)
    ctx_keys, nxt = pairs // V, pairs % V
    contexts, row = np.unique(ctx_keys, return_inverse=True)
    table = np.zeros((len(contexts), V))
    table[row, nxt] = counts
    digits = np.zeros((len(contexts), m), dtype=np.int64)
    rest = contexts.copy()
    for j in range(m - 1, -1, -1):
        digits[:, j], rest = rest % V, rest // V
    return list(map(tuple, digits.tolist())), table


def ngram_dist(tables, context, V):
    """The Witten-Bell interpolated next-token distribution after `context` (any length)."""
    p = np.full(V, 1.0 / V)
    n = len(context)
    for m, table in enumerate(tables):
        if m > n:
            break
        c = table.get(tuple(context[n - m:]) if m else ())
        if c is None:
            continue
        N, T = c.sum(), np.count_nonzero(c)
        p = (c + T * p) / (N + T)
    return p


def build_tables(ids, max_order, V):
    """[next_counts(ids, m, V) for m in 0 .. max_order-1]: every model of order <= max_order shares them."""
    return [next_counts(ids, m, V) for m in range(max_order)]


class NGram:
    """A character model of order `order`: model(context) is the length-V next-token distribution.

    Built from token ids, or from tables already counted (tables[:order] are used). Calls are
    memoised on the last order-1 tokens, which are all the model looks at; each call returns
    its own copy.

    The distribution is ngram_dist's, computed in one step instead of one pass per context
    length: unrolling p_m = c_m / (N_m + T_m) + w_m p_(m-1), with w_m = T_m / (N_m + T_m),

        p = sum_m [prod_(m' > m) w_m'] c_m / (N_m + T_m)  +  [prod_m w_m] / V,

    over the context lengths that were seen (an unseen one leaves p unchanged: weight 1). The
    scalars are plain Python and the vectors meet in one dot product, several times faster than
    the loop over context lengths; the two agree to rounding (tests/speclab/test_ngram.py checks it).
    """

    def __init__(self, ids=None, order=3, V=None, tables=None):
        if tables is None:
            tables = build_tables(ids, order, V)
        if len(tables) < order:
            raise ValueError(f"an order-{order} model needs {order} tables, got {len(tables)}")
        self.order, self.V, self.tables = order, V, tables[:order]
        self._cache = {}
        self._stats = [{} for _ in range(order)]   # per context length: context -> (N + T, T)

    def _dist(self, key):
        """The interpolated distribution after the context tuple `key` (len(key) <= order - 1)."""
        n = len(key)
        rows, coefs, weight = [], [], 1.0
        for m in range(min(self.order - 1, n), -1, -1):   # longest context first
            suffix = key[n - m:] if m else ()
            c = self.tables[m].get(suffix)
            if c is None:
                continue
            stats = self._stats[m].get(suffix)
            if stats is None:
                stats = self._stats[m][suffix] = (float(c.sum()) + np.count_nonzero(c), np.count_nonzero(c))
            total, T = stats
            rows.append(c)
            coefs.append(weight / total)
            weight *= T / total
        p = np.dot(coefs, rows) if rows else np.zeros(self.V)
        p += weight / self.V
        return p

    @property
    def window(self):
        """How many trailing tokens of a context the model reads: order - 1."""
        return self.order - 1

    def __call__(self, context):
        key = tuple(context[1 - self.order:]) if self.order > 1 else ()   # the last order - 1 tokens
        p = self._cache.get(key)
        if p is None:
            p = self._dist(key)
            if len(self._cache) > 200_000:
                self._cache.clear()
            self._cache[key] = p
        return p.copy()  # a caller that edits its p must not edit the memo

    def uncached(self, context):
        """The same distribution without the memo (for timing one real call)."""
        n = len(context)
        return self._dist(tuple(context[max(0, n - self.order + 1):]))

    def __repr__(self):
        return f"NGram(order={self.order}, V={self.V}, contexts={sum(map(len, self.tables)):,})"


# --- the course's two corpora, counted once -------------------------------------------------

CORPUS_MAX_ORDER = 6   # notebook 08's target reads 5 characters back
_CORPUS_MODELS = {}


@lru_cache(maxsize=None)
def shared_alphabet():
    """Every character of the course's corpora, sorted: the one numbering all their models share."""
    return alphabet(*(load_corpus(name) for name in CORPUS_FILES))


@lru_cache(maxsize=None)
def _corpus_ids(name):
    ids = encode(load_corpus(name), shared_alphabet())
    ids.setflags(write=False)   # shared by every caller: read-only
    return ids


def corpus_ids(name):
    """The corpus `name` ("prose" or "code") as token ids over shared_alphabet() (a read-only array)."""
    return _corpus_ids(name)


@contextmanager
def _no_cyclic_gc():
    """Pause Python's cyclic garbage collector while the tables are built. Their 130,000 context tuples
    and rows each count as an allocation, and every 700 of them start a collection that walks the
    growing heap (in a kernel, IPython's and matplotlib's too). Both corpora's tables and statistics,
    in a process that has imported matplotlib: 0.45 s of CPU with the collector on, 0.27 s paused
    (best of 5 each, interleaved). Nothing built here can form a cycle, so the pause frees nothing later."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


@lru_cache(maxsize=None)
def _corpus_rows(name):
    """[(contexts, 2-D counts) for m = 0 .. CORPUS_MAX_ORDER-1]: the tables as next_counts counts them."""
    ids, V = corpus_ids(name), len(shared_alphabet())
    with _no_cyclic_gc():
        return tuple(_count_rows(ids, m, V) for m in range(CORPUS_MAX_ORDER))


@lru_cache(maxsize=None)
def _corpus_tables(name):
    rows = _corpus_rows(name)
    with _no_cyclic_gc():
        return tuple(dict(zip(contexts, table)) for contexts, table in rows)


@lru_cache(maxsize=None)
def _corpus_stats(name):
    """Per context length, {context: (N + T, T)} for every context of the corpus, computed once for all
    its models in one pass per table (an NGram computes them one context at a time, per model). The
    counts are integers, so N + T is exact whatever the order of the sum: the same numbers, bit for bit."""
    stats = []
    for contexts, table in _corpus_rows(name):
        T = np.count_nonzero(table, axis=1)
        with _no_cyclic_gc():
            stats.append(dict(zip(contexts, zip((table.sum(axis=1) + T).tolist(), T.tolist()))))
    return tuple(stats)


def corpus_tables(name):
    """[tables for m = 0 .. CORPUS_MAX_ORDER-1] of one corpus, counted once per process (a new list each call)."""
    return list(_corpus_tables(name))


class CorpusModel(NGram):
    """A model of one of the course's corpora, as corpus_model returns it.

    It is built from a corpus's name and an order, never from tables: the notebook hands these
    models out, and an object whose class could be rebuilt on any tables (type(model)(tables=...))
    would hand out notebook 08's Exercise B with them.
    """

    def __init__(self, name, order):
        if not 1 <= order <= CORPUS_MAX_ORDER:
            raise ValueError(f"order must be 1 .. {CORPUS_MAX_ORDER}, got {order}")
        super().__init__(tables=list(_corpus_tables(name)), order=int(order), V=len(shared_alphabet()))
        self.name = name
        self._stats = list(_corpus_stats(name)[:self.order])   # complete: _dist never adds to them

    def __repr__(self):
        return f"corpus_model({self.name!r}, {self.order})"


def corpus_model(name, order):
    """The order-`order` model of one corpus over the shared alphabet; the same object on every call.

    Every model of a corpus shares its tables, and each keeps its memo between calls, so a widget
    that asks for the same model again does not recount or recompute what it already has.
    """
    key = (name, int(order))
    if key not in _CORPUS_MODELS:
        _CORPUS_MODELS[key] = CorpusModel(name, order)
    return _CORPUS_MODELS[key]
