"""Notebook 08's real-text pieces: counting the corpora, one model call, one widget redraw, the sweeps.

Wall-clock times are for this machine now (it is shared, so compare within one run); the
draft-cost ratios use CPU time (speclab.textspec.cost_ratio), as the notebook does.
"""
import time

import numpy as np

from speclab import ngram, textspec

ORDER = 6


def _timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def bench():
    texts, t_load = _timed(lambda: {name: ngram.load_corpus(name) for name in ("prose", "code")})
    alpha = ngram.alphabet(*texts.values())
    V = len(alpha)
    ids = {name: ngram.encode(text, alpha) for name, text in texts.items()}
    yield "read both corpora", f"{t_load * 1e3:6.1f} ms ({sum(map(len, texts.values())):,} chars)"
    tables, t_build = _timed(lambda: {name: ngram.build_tables(ids[name], ORDER, V) for name in ids})
    yield f"count tables m = 0..{ORDER - 1} for both corpora (NumPy)", f"{t_build:6.2f} s"
    for name in ids:
        target = ngram.NGram(tables=tables[name], order=ORDER, V=V)
        ctxs = [ids[name][i - 8:i].tolist() for i in range(1_000, 101_000, 500)]
        yield f"{name}: one order-6 call (uncached, CPU time)", f"{textspec.seconds_per_call(target, ctxs) * 1e6:6.1f} us"
        costs = [textspec.cost_ratio(ngram.NGram(tables=tables[name], order=d, V=V), target, ctxs) for d in range(1, 6)]
        yield f"{name}: draft cost c, orders 1-5", " ".join(f"{c:.2f}" for c in costs)
        for d in (2, 4):
            gen, t_gen = _timed(lambda: textspec.generate(
                target, ngram.NGram(tables=tables[name], order=d, V=V), ids[name][:200].tolist(), 1_500, 4,
                np.random.default_rng(104)))
            yield (f"{name}: order-{d} draft, k = 4: acceptance, tokens/call, time",
                   f"{gen.accept_rate:.3f}, {gen.tokens_per_call:.2f}, {t_gen:5.2f} s")
        _, t_redraw = _timed(lambda: textspec.generate(
            ngram.NGram(tables=tables[name], order=ORDER, V=V), ngram.NGram(tables=tables[name], order=4, V=V),
            ids[name][:200].tolist(), 240, 4, np.random.default_rng(0)))
        yield f"{name}: the widget's generation (240 chars, cold memo)", f"{t_redraw * 1e3:6.1f} ms"
