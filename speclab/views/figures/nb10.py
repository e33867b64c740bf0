"""Notebook 10's widget: choose a task, a draft and k; the bars show how many tokens each round produced,
the title the acceptance and the speedup the measured verify cost predicts (and the measured one, where
the notebook timed it). Nothing is recomputed: the notebook hands over what it measured.

    table = nb10.PayoffTable(replays, agree, best_L, r, n_layers, measured)
    payoff = widgets.live(nb10.build_payoff, partial(nb10.update_payoff, table=table), task=..., draft=..., k=...)
"""
import numpy as np

from .. import style, widgets
from ...speed.costs import expected_tokens
from ...decoding.specloop import predicted_speedup

K_MAX = 8


class PayoffTable:
    """What section 7 measured: per task, prompt lookup's replayed rounds for each k (`replays[task][k]`, a
    specloop.Run); early exit's agreement by exit layer (`agree`) and the exit used (`layer`); the verify
    cost r[n] = t(n)/t(1); and per task (k, measured speedup) where one was timed."""

    def __init__(self, replays, agree, layer, r, n_layers, measured):
        self.replays, self.agree, self.layer, self.r = replays, agree, layer, r
        self.c_exit, self.measured = layer / n_layers, measured

    def predicted(self, task, draft, k):
        if draft == "prompt lookup":
            return predicted_speedup(self.replays[task][k], self.r)
        a = self.agree[self.layer]
        return expected_tokens(a, k) / (k * self.c_exit + self.r[k + 1])

    def rounds(self, task, draft, k):
        """Tokens per round: the replayed rounds, or early exit's expected share of rounds per size."""
        if draft == "prompt lookup":
            return np.bincount(np.array(self.replays[task][k].kept) + 1, minlength=K_MAX + 2)[1:]
        a = self.agree[self.layer]
        share = np.array([a ** j * (1 - a) for j in range(k)] + [a ** k] + [0.0] * (K_MAX - k))
        return share * len(self.replays[task][k].kept)


def build_payoff(fig):
    ax = fig.subplots()
    bars = ax.bar(np.arange(1, K_MAX + 2), np.zeros(K_MAX + 1), color=style.COLORS["accepted"])
    ax.set(xlabel="tokens one target call produced", ylabel="rounds", xticks=np.arange(1, K_MAX + 2))
    title = ax.set_title(" ", y=1.0)
    return widgets.moving(*bars, title) + (ax,)


def update_payoff(parts, task, draft, k, table):
    *bars, title, ax = parts
    counts = table.rounds(task, draft, k)
    for bar, height in zip(bars, counts):
        bar.set_height(height)
    ax.set_xlim(0.4, k + 1.6)
    style.steady_ylim(ax, 0, max(1.0, float(np.max(counts))))
    predicted = table.predicted(task, draft, k)
    timed_k, timed = table.measured.get(task, (None, None))
    measured = timed if draft == "prompt lookup" and timed_k == k else None
    alpha = table.replays[task][k].alpha if draft == "prompt lookup" else table.agree[table.layer]
    title.set_text(f"{task}, {draft}, k = {k}: alpha {alpha:.2f}, predicted {predicted:.2f}x"
                   + (f", measured {measured:.2f}x" if measured is not None else ""))
    return {"alpha": alpha, "predicted": predicted, "measured": measured}
