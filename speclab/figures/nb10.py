"""Notebook 10's widget: choose the draft and k; a timed run of speculative decoding shows how many
tokens each target call produced (left) and its tokens per second against plain decoding (right).

    runs = nb10.TimedRuns(target, {"separate draft": draft, "target's layer 1": self_draft}, prompt, 60, plain)
    speed_widget = widgets.live(nb10.build_speed, partial(nb10.update_speed, runs=runs), figsize=(9, 3.2),
                                which=..., k=...)
"""
import time

import numpy as np
from threadpoolctl import threadpool_limits

from .. import style, widgets
from ..realspec import Run, speculative_generate

K_MAX = 8
REPEATS = 3  # times each run is timed; the median is shown, the estimator of section 5's plain rate


class TimedRuns:
    """One run per (draft, k) for k = 1 .. K_MAX: `n` tokens after `prompt`, seed 0, one BLAS thread,
    timed REPEATS times. `plain` is plain decoding's tokens per second, the median the notebook measured.

    Every run is made and timed here, as the widget is built (a few seconds): a move only shows a run,
    so it costs a redraw, not a generation (issue 30: a real generation on a move took several times
    the 250 ms a move may take). The repeats are interleaved, draft by draft and k by k, as in section
    5, so a slow moment of the machine (the notebook's own Run All still drawing) hits every run alike,
    and the median of each is compared with plain's median: one timing against a median would make
    every hiccup count against speculation. The notebook's text says so."""

    def __init__(self, target, drafts, prompt, n, plain):
        self.target, self.drafts, self.prompt, self.n, self.plain = target, dict(drafts), list(prompt), n, plain
        self._runs, self._seconds = {}, {}
        for _ in range(REPEATS):
            for k in range(1, K_MAX + 1):
                for which in self.drafts:
                    self._time(which, k)

    def _time(self, which, k):
        run = Run([])
        with threadpool_limits(1):
            t0 = time.perf_counter()
            speculative_generate(self.target, self.drafts[which], self.prompt, self.n, k,
                                 np.random.default_rng(0), run)
            seconds = time.perf_counter() - t0
        self._runs.setdefault((which, k), run)  # seed 0 every time: the same run, timed again
        self._seconds.setdefault((which, k), []).append(seconds)

    def __call__(self, which, k):
        """(Run, tokens per second: the median of its timings) of the run with draft `which` and k drafts per round."""
        if (which, k) not in self._runs:
            self._time(which, k)
        return self._runs[which, k], self.n / float(np.median(self._seconds[which, k]))


def build_speed(fig):
    """Two panels: rounds by tokens per call (bars for 1 .. K_MAX + 1), plain against speculative tokens/s."""
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2, 1]})
    sizes = ax1.bar(np.arange(1, K_MAX + 2), np.zeros(K_MAX + 1), color=style.COLORS["accepted"])
    ax1.set(xlabel="tokens one target call produced", ylabel="rounds", xticks=np.arange(1, K_MAX + 2))
    speeds = ax2.bar(["plain", "speculative"], [1.0, 1.0], color=[style.COLORS["plain"], style.COLORS["accepted"]])
    ax2.set(ylabel="tokens / s")
    title1, title2 = ax1.set_title(" ", y=1.0), ax2.set_title(" ", y=1.0)   # fixed places: no layout pass per frame
    return widgets.moving(*sizes, *speeds, title1, title2) + (ax1, ax2)


def update_speed(parts, which, k, runs):
    """Show the timed run of `runs` (a TimedRuns) for this draft and k."""
    *bars, title1, title2, ax1, ax2 = parts
    sizes, (plain_bar, spec_bar) = bars[:K_MAX + 1], bars[K_MAX + 1:]
    run, spec = runs(which, k)
    counts = np.bincount(np.array(run.kept) + 1, minlength=K_MAX + 2)[1:]
    for bar, height in zip(sizes, counts):
        bar.set_height(height)
    ax1.set_xlim(0.4, k + 1.6)
    style.steady_ylim(ax1, 0, counts.max())
    plain_bar.set_height(runs.plain)
    spec_bar.set_height(spec)
    style.steady_ylim(ax2, 0, max(runs.plain, spec))
    title1.set_text(f"{which}, k = {k}: {run.tokens_per_call:.2f} tokens per call")
    title2.set_text(f"{spec / runs.plain:.2f}x")
    return {"tokens_per_call": run.tokens_per_call, "tokens_per_s": spec, "plain_tokens_per_s": runs.plain}

