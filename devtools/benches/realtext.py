"""Notebook 08's real-text pieces: counting the corpora, one model call, the runs, the widget's redraw.

Wall-clock times are for this machine now (it is shared, so compare within one run); the
draft-cost ratios use CPU time (speclab.textspec.cost_ratio), as the notebook does. The widget
is timed the way a slider move runs it: a new figure, the notebook's draw function, the PNG the
inline backend encodes (bbox_inches="tight"), median over a sequence of moves to settings not
seen before (the widget caches each setting it has drawn, so a move back is cheaper still).
"""
import contextlib
import io
import time

import numpy as np

from speclab import ngram, textspec

ORDER = 6
AID = "08_real_text"


def _timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def _alpha(target, draft, prompt, gen):
    text = list(prompt) + gen.tokens
    return float(np.mean([np.minimum(target(text[:i]), draft(text[:i])).sum() for i in range(len(prompt), len(text))]))


def _widget_namespace():
    """The source notebook's namespace, executed up to and including its widget cell."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import nbformat

    from grading.course import source_notebook

    nb = nbformat.read(source_notebook(AID), as_version=4)
    ns = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            exec(compile(cell.source, f"<{AID} {cell.id}>", "exec"), ns)
            plt.close("all")
            if "generation_widget" in ns:
                break
    return ns


def widget_redraws(ns, moves):
    """[(compute+draw ms, PNG encode ms)] for each move (a dict of control changes), in order."""
    import matplotlib.pyplot as plt

    widget = ns["generation_widget"]
    state = dict(widget.kwargs)
    out = []
    for change in moves:
        state.update(change)
        start = time.perf_counter()
        fig = plt.figure(figsize=widget._figsize)
        with contextlib.redirect_stdout(io.StringIO()):
            widget._draw(fig, **state)
        drawn = time.perf_counter()
        fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")
        plt.close(fig)
        out.append(((drawn - start) * 1e3, (time.perf_counter() - drawn) * 1e3))
    return out


MOVES = ([{"seed": s} for s in range(1, 6)] + [{"k": k} for k in (5, 6, 7, 3)]
         + [{"draft_order": d} for d in (3, 2, 5)] + [{"corpus": "prose"}] + [{"seed": s} for s in (7, 8)])


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
    ns, t_ns = _timed(_widget_namespace)
    yield "run notebook 08 up to its widget", f"{t_ns:6.1f} s"
    times = np.array(widget_redraws(ns, MOVES))
    total = times.sum(axis=1)
    yield (f"08 generation widget: redraw, median of {len(MOVES)} new settings",
           f"{np.median(total):6.1f} ms  (compute + draw {np.median(times[:, 0]):.1f}, PNG {np.median(times[:, 1]):.1f}; "
           f"max {total.max():.1f})")
    again = np.array(widget_redraws(ns, MOVES[:5]))
    yield "08 generation widget: redraw of settings already drawn", f"{np.median(again.sum(axis=1)):6.1f} ms"
