"""A model handed over as data: its next-token distribution after every context a test will ask about, computed
once, looked up after.

08's hidden tests hand the learner's verify_context_round a target and a draft and compare the tokens it emits with
the course's round. A model of the grader's, handed to the kernel, is a callback: one round trip per context it is
asked about, about 1,100 of them in that test. A ModelTable crosses once per call, by value
(grading/judge/registry.py checks its fields), and answers from its rows wherever it is called; it asks nothing back.
"""
import numpy as np


class ModelTable:
    """model(context), looked up: the distribution `model` gives after each context of `contexts`. A context is
    read as the model reads it, by its last `window` tokens (speclab.models.ngram's models say how many), so a
    round that copies a shorter or a longer prefix of the same ending gets the same answer the model gives.
    A context outside the table is an AssertionError that says which one was asked for."""

    def __init__(self, model, contexts):
        self.window = int(model.window)
        self.contexts = []
        for context in contexts:
            key = self._key(context)
            if key not in self.contexts:
                self.contexts.append(key)
        self.probs = np.array([model(key) for key in self.contexts], dtype=np.float64)

    def _key(self, context):
        return [int(t) for t in context[-self.window:]] if self.window else []

    def __call__(self, context):
        key = self._key(context)
        if key not in self.contexts:
            raise AssertionError(
                f"the model was asked about a context that ends {key} (its last {self.window} tokens: all it reads); "
                "a round only asks about context + drafted[:i], for i = 0 .. k")
        return self.probs[self.contexts.index(key)].copy()
