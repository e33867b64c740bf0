"""Notebook 08's widget: 240 characters generated speculatively, coloured by how each came out.

For a corpus, the draft's order, k and a seed, the order-6 target and the draft generate 240
characters after the corpus's first 200 (speclab.decoding.textspec.generate). The text is shown coloured
(accepted draft, resampled from the residual, bonus); the bars count the rounds by the tokens
they emitted, against the i.i.d. formula's expectation from the run's own alpha (the mean of
beta along the run, by the notebook's betas(target, draft, prompt, gen), passed in).
"""
from functools import lru_cache

import numpy as np
from IPython.display import HTML, display
from matplotlib.ticker import MaxNLocator

from .. import style, widgets
from ...models.ngram import corpus_ids, corpus_model, decode, shared_alphabet
from ...decoding.textspec import coloured_html, generate

TARGET_ORDER = 6
PROMPT, LENGTH = 200, 240   # the prompt: a corpus's first 200 characters; then 240 generated
K_MAX = 8
SIZES = np.arange(1, K_MAX + 2)   # a round emits 1 .. k + 1 tokens
ROUND_COLOURS = {"accepted": style.COLORS["accepted"], "resampled": style.COLORS["residual"],
                 "bonus": style.COLORS["bonus"]}


@lru_cache(maxsize=None)
def generation(corpus, draft_order, k, seed, betas):
    """(the generation, beta at each of its positions): each setting runs once."""
    target, draft = corpus_model(corpus, TARGET_ORDER), corpus_model(corpus, draft_order)
    prompt = corpus_ids(corpus)[:PROMPT].tolist()
    gen = generate(target, draft, prompt, LENGTH, k, np.random.default_rng(seed))
    return gen, betas(target, draft, prompt, gen)


def build_generation(fig, betas):
    """What no control changes, drawn once; returns the artists a move changes (and `betas`,
    the notebook's beta along a run, which a move calls)."""
    fig.set_layout_engine(None)   # fixed margins: a layout pass on every move would double the drawing
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.2, top=0.86)
    ax = fig.add_subplot()
    bars = ax.bar(SIZES, np.zeros(len(SIZES)), color=style.COLORS["residual"])
    iid, = ax.plot(SIZES, np.zeros(len(SIZES)), "_", color="black", ms=18, mew=2)
    beyond = ax.axvspan(5.5, K_MAX + 1.6, color=style.COLORS["floor"], alpha=0.15, lw=0)
    beyond_label = ax.text(7.5, 0.5, " ", transform=ax.get_xaxis_transform(), ha="center", va="center",
                           fontsize=8, color=style.COLORS["plain"])
    ax.set_xticks(SIZES)
    ax.set(xlim=(0.4, K_MAX + 1.6), xlabel="tokens a round emitted (bars: this run; black: the i.i.d. formula)",
           ylabel="rounds")
    ax.yaxis.set_major_locator(MaxNLocator(4, integer=True))
    ax.set_axisbelow(True)   # grid lines behind the bars, which a move draws over the kept frame
    # a title drawn as text at a fixed place, centred on the figure (it is wider than the axes): the
    # same words, without the title's layout pass
    title = ax.text(0.5, 0.885, " ", transform=fig.transFigure, ha="center", fontsize=10.5, fontweight="bold")
    return widgets.moving(*bars, iid, beyond, beyond_label, title) + (ax, betas)


@widgets.displays   # the coloured text, above the figure
def update_generation(parts, corpus, draft_order, k, seed):
    """The generated text coloured by kind; rounds by size against the i.i.d. formula's expectation."""
    *bars, iid_marks, beyond, beyond_label, title, ax, betas = parts
    gen, beta = generation(corpus, draft_order, k, seed, betas)
    a = float(beta.mean())
    alpha = shared_alphabet()
    display(HTML(coloured_html(gen.tokens, gen.kinds, alpha, ROUND_COLOURS)))
    n = np.arange(1, k + 2)
    sizes = np.bincount(gen.rounds, minlength=k + 2)[1:]
    iid = len(gen.rounds) * np.append(a ** (n[:-1] - 1) * (1 - a), a ** k)
    for i, bar in enumerate(bars):   # k + 1 bars show, the last (all k kept, plus the bonus) in its colour
        bar.set_visible(i <= k)
        if i <= k:
            bar.set_height(sizes[i])
            bar.set_color(style.COLORS["bonus"] if i == k else style.COLORS["residual"])
    iid_marks.set_data(n, iid)
    beyond.set_bounds(k + 1.5, 0, K_MAX + 1.6 - (k + 1.5), 1)   # shaded: more than k + 1 tokens, which no round emits
    beyond_label.set_text(f"a round emits\nat most k + 1 = {k + 1}" if k < K_MAX else "")
    beyond_label.set_x((k + 1.5 + K_MAX + 1.6) / 2)
    title.set_text(f"{corpus}, order-{draft_order} draft, k = {k}: alpha {a:.2f}, kept fraction "
                   f"{gen.kept_fraction:.2f}, {gen.tokens_per_call:.2f} tokens per call")
    # a round y axis that changes only where the bars cross a step of 1, 2, 5 (a new axis redraws the frame)
    ax.set_ylim(0, style.round_top(max(sizes.max(), iid.max())))
    return {"alpha": a, "kept_fraction": gen.kept_fraction, "tokens_per_call": gen.tokens_per_call,
            "text": decode(gen.tokens, alpha), "kinds": gen.kinds}
