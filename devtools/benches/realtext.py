"""Notebook 08's real-text pieces: counting the corpora, one model call, the runs and their alpha.

Wall-clock times are for this machine now (it is shared, so compare within one run); the
draft-cost ratios use CPU time (speclab.decoding.textspec.cost_ratio), as the notebook does. The widget's
redraw is timed with every other widget's, in the widgets section (devtools/benches/widgets.py).
"""
import time

import numpy as np

from speclab.models import ngram
from speclab.decoding import textspec

ORDER = 6


def _timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def _alpha(target, draft, prompt, gen):
    text = list(prompt) + gen.tokens
    return float(np.mean([np.minimum(target(text[:i]), draft(text[:i])).sum() for i in range(len(prompt), len(text))]))


def bench():
    texts, t_load = _timed(lambda: {name: ngram.load_corpus(name) for name in ("prose", "code")})
    yield "read both corpora", f"{t_load * 1e3:6.1f} ms ({sum(map(len, texts.values())):,} chars)"
    _, t_build = _timed(lambda: [ngram.corpus_tables(name) for name in ("prose", "code")])
    yield f"count tables m = 0..{ORDER - 1} for both corpora (NumPy)", f"{t_build:6.2f} s"
    for name in ("prose", "code"):
        ids = ngram.corpus_ids(name)
        target = ngram.corpus_model(name, ORDER)
        ctxs = [ids[i - 8:i].tolist() for i in range(1_000, 101_000, 500)]
        yield f"{name}: one order-6 call (uncached, CPU time)", f"{textspec.seconds_per_call(target, ctxs) * 1e6:6.1f} us"
        costs = [textspec.cost_ratio(ngram.corpus_model(name, d), target, ctxs) for d in range(1, 6)]
        yield f"{name}: draft cost c, orders 1-5", " ".join(f"{c:.2f}" for c in costs)
        prompt = ids[:200].tolist()
        for d in (2, 4):
            draft = ngram.corpus_model(name, d)
            gen, t_gen = _timed(lambda: textspec.generate(target, draft, prompt, 1_500, 4, np.random.default_rng(104)))
            yield (f"{name}: order-{d} draft, k = 4: kept, alpha, tokens/call, time",
                   f"{gen.kept_fraction:.3f}, {_alpha(target, draft, prompt, gen):.3f}, {gen.tokens_per_call:.2f}, "
                   f"{t_gen:5.2f} s")
