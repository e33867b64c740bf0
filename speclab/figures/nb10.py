"""Notebook 10's widget: choose the draft and k; a run of speculative decoding shows how many tokens
each target call produced (left) and its CPU-time speed against plain decoding's (right).

    runs = nb10.TimedRuns(target, {"separate draft": draft, "target's layer 1": self_draft}, prompt, 40, gen)
    speed_widget = widgets.live(nb10.build_speed, partial(nb10.update_speed, runs=runs), figsize=(9, 3.2),
                                which=..., k=...)
"""
import numpy as np

from .. import style, widgets
from ..realspec import generation_times

K_MAX = 8
REPEATS = 3  # passes when a configuration is measured on demand: the median of 3, plain timed in the same passes


class TimedRuns:
    """Runs of `n` tokens after `prompt`, per (draft, k), with their CPU times and plain decoding's.

    `measured` is what the notebook already timed (realspec.generation_times, keyed (draft label, k)):
    those are shown as they are, so Run All and grading time nothing here. A configuration not yet
    measured is timed when a learner first moves to it (REPEATS passes, plain decoding in the same
    passes, interleaved, CPU time: about a second), then kept."""

    def __init__(self, target, drafts, prompt, n, measured):
        self.target, self.drafts, self.prompt, self.n = target, dict(drafts), list(prompt), n
        self._times = {key: (measured[key], measured["plain"]) for key in measured if key != "plain"}

    def measured(self, which, k):
        return (which, k) in self._times

    def __call__(self, which, k):
        """(Run of the first pass, speculative tokens/s, plain tokens/s): medians of CPU time."""
        if (which, k) not in self._times:
            got = generation_times(self.target, {(which, k): (self.drafts[which], k)}, self.prompt, self.n, REPEATS)
            self._times[which, k] = (got[which, k], got["plain"])
        spec, plain = self._times[which, k]
        return (spec[0].run, self.n / float(np.median([t.seconds for t in spec])),
                self.n / float(np.median([t.seconds for t in plain])))


def build_speed(fig):
    """Two panels: rounds by tokens per call (bars for 1 .. K_MAX + 1), plain against speculative tokens/s."""
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2, 1]})
    sizes = ax1.bar(np.arange(1, K_MAX + 2), np.zeros(K_MAX + 1), color=style.COLORS["accepted"])
    ax1.set(xlabel="tokens one target call produced", ylabel="rounds", xticks=np.arange(1, K_MAX + 2))
    speeds = ax2.bar(["plain", "speculative"], [1.0, 1.0], color=[style.COLORS["plain"], style.COLORS["accepted"]])
    ax2.set(ylabel="tokens per CPU second")
    title1, title2 = ax1.set_title(" ", y=1.0), ax2.set_title(" ", y=1.0)   # fixed places: no layout pass per frame
    return widgets.moving(*sizes, *speeds, title1, title2) + (ax1, ax2)


def update_speed(parts, which, k, runs):
    """Show the run of `runs` (a TimedRuns) for this draft and k, timing it first if it never was."""
    *bars, title1, title2, ax1, ax2 = parts
    sizes, (plain_bar, spec_bar) = bars[:K_MAX + 1], bars[K_MAX + 1:]
    run, spec, plain = runs(which, k)
    counts = np.bincount(np.array(run.kept) + 1, minlength=K_MAX + 2)[1:]
    for bar, height in zip(sizes, counts):
        bar.set_height(height)
    ax1.set_xlim(0.4, k + 1.6)
    style.steady_ylim(ax1, 0, counts.max())
    plain_bar.set_height(plain)
    spec_bar.set_height(spec)
    style.steady_ylim(ax2, 0, max(plain, spec))
    title1.set_text(f"{which}, k = {k}: {run.tokens_per_call:.2f} tokens per call")
    title2.set_text(f"{spec / plain:.2f}x (median of {len(runs._times[which, k][0])})")
    return {"tokens_per_call": run.tokens_per_call, "tokens_per_s": spec, "plain_tokens_per_s": plain}
