"""A step price handed over as data: every pass a best_gain may ask for, priced once, looked up after.

07's hidden tests hand the learner's best_gain a `step` and compare its answer with the course's. A function
of the grader's, handed to the kernel, is a callback: one round trip per batch priced, about 1,500 of them per
deployment. A PriceTable crosses once, by value (grading/judge/registry.py checks its fields), and answers
from its table wherever it is called; it asks nothing back.
"""
import numpy as np


class PriceTable:
    """step(cfg, acc, n_tokens, ctx, batch), looked up: the seconds `step` gives for every model of `models`,
    every pass length of `passes` and every batch from 1 to `batches`, on one accelerator at one context.
    A pass outside the table is an AssertionError that says which one was asked for."""

    def __init__(self, step, models, acc, ctx, passes, batches):
        self.models = [str(cfg["name"]) for cfg in models]
        self.passes = [int(n) for n in passes]
        self.acc, self.ctx = str(acc["name"]), int(ctx)
        self.seconds = np.array([[[float(step(cfg, acc, n, ctx, b)) for b in range(1, batches + 1)]
                                  for n in self.passes] for cfg in models])

    def __call__(self, cfg, acc, n_tokens, ctx, batch=1):
        asked = f"a pass of {n_tokens!r} tokens at context {ctx!r}, batch {batch!r}"
        if cfg.get("name") not in self.models or acc.get("name") != self.acc:
            raise AssertionError(f"{asked}: price the target and the draft you were given, on the accelerator "
                                 "you were given")
        if ctx != self.ctx:
            raise AssertionError(f"{asked}: every pass of a deployment at context {self.ctx:,} is priced at it")
        if n_tokens not in self.passes:
            raise AssertionError(f"{asked}: plain decoding prices one token per step, speculation k one-token draft "
                                 f"steps and one verify pass of k + 1 positions ({' or '.join(map(str, self.passes))} "
                                 "here)")
        if batch != int(batch) or not 1 <= batch <= self.seconds.shape[2]:
            raise AssertionError(f"{asked}: price whole batches from 1 up to the most sequences that fit "
                                 f"({self.seconds.shape[2]:,} here): count the target's weights and, per sequence, "
                                 "the target's cache (and, for speculation, the draft's weights and cache)")
        return float(self.seconds[self.models.index(cfg["name"]), self.passes.index(n_tokens), int(batch) - 1])
