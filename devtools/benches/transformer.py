"""Notebook 10's trained transformers: forward time against block size, and tokens per second,
plain against speculative decoding (separate draft and the target's own first layer), side by side.

Wall-clock, one BLAS thread; every configuration is run in each of REPEAT interleaved passes, so a
busy moment on this shared machine hits them all alike; the median and the min-max are printed.
"""
import numpy as np

from speclab import realspec
from speclab import transformer as tf

REPEAT = 5
N = 60
PROMPT = tf.encode("    def add_argument(self, *args, **kwargs):\n        ")


def bench():
    target, draft = tf.load("target"), tf.load("draft")
    self_draft = target.exit_at(1)
    t1 = realspec.forward_seconds(target, 1, repeat=15)
    for name, model in (("target", target), ("draft", draft), ("target layer 1 + head", self_draft)):
        times = [realspec.forward_seconds(model, n, repeat=15) for n in (1, 2, 3, 5, 9, 17)]
        yield (f"{name}: forward over 1, 2, 3, 5, 9, 17 new tokens (64 cached)",
               " ".join(f"{t * 1e3:.2f}" for t in times) + f" ms  (17 vs 1: {times[-1] / times[0]:.1f}x)")
        if model is not target:
            yield f"{name}: c = t_draft(1) / t_target(1)", f"{times[0] / t1:.3f}"
    for label, d, ks in (("separate draft", draft, list(range(1, 9))), ("self-draft", self_draft, [1, 2, 3, 4])):
        tps = realspec.tokens_per_second(target, d, PROMPT, N, ks, repeat=REPEAT)
        plain = np.median(tps["plain"])
        yield (f"{label}: plain decoding, tokens/s (median, min-max of {REPEAT})",
               f"{plain:7.1f}  ({min(tps['plain']):.1f}-{max(tps['plain']):.1f})")
        for k in ks:
            yield (f"{label}: k = {k}, tokens/s and speedup",
                   f"{np.median(tps[k]):7.1f}  ({min(tps[k]):.1f}-{max(tps[k]):.1f})  {np.median(tps[k]) / plain:.2f}x")
