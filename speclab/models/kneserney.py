"""A character n-gram with Kneser-Ney smoothing: the baseline a neural language model must beat (10).

Notebook 10 scores SmolLM2 and this 5-gram on the same characters of notebook 08's corpora, the
n-gram counted from everything before them.
"""
import numpy as np


def held_out(name, chars):
    """(the corpus's text before its last `chars` characters, those characters): train and test text."""
    from .ngram import load_corpus
    text = load_corpus(name)
    return text[:-chars], text[-chars:]


class KneserNey:
    """Interpolated Kneser-Ney over characters (Chen & Goodman 1998, section 3.5), counted with NumPy.

    Order N: the highest order uses counts, every lower order continuation counts (how many distinct
    characters precede an n-gram), one absolute discount per order D = n1 / (n1 + 2 n2), and the
    lowest order is interpolated with the uniform 1/V. Tokens are ints below V (ASCII codes here)."""

    def __init__(self, tokens, order, V=128):
        self.order, self.V = order, V
        ids = np.asarray(tokens, dtype=np.int64)
        grams = {m: self._codes(ids, m) for m in range(1, order + 1)}
        self.tables = {}
        for m in range(1, order + 1):
            if m == order:
                codes, counts = np.unique(grams[m], return_counts=True)
            else:   # continuation counts: distinct left neighbours of each m-gram
                longer = np.unique(grams[m + 1])
                codes, counts = np.unique(longer % V ** m, return_counts=True)
            n1, n2 = (counts == 1).sum(), (counts == 2).sum()
            D = n1 / (n1 + 2 * n2) if n1 + n2 else 0.5
            ctx, first = np.unique(codes // V, return_index=True)
            totals = np.add.reduceat(counts, first)
            types = np.diff(np.append(first, len(codes)))
            self.tables[m] = (codes, counts, ctx, totals, types, D)

    def _codes(self, ids, m):
        code = np.zeros(len(ids) - m + 1, dtype=np.int64)
        for j in range(m):
            code = code * self.V + ids[j:len(ids) - m + 1 + j]
        return code

    @staticmethod
    def _lookup(sorted_keys, values, keys):
        i = np.clip(np.searchsorted(sorted_keys, keys), 0, len(sorted_keys) - 1)
        return np.where(sorted_keys[i] == keys, values[i], 0)

    def next_probs(self, tokens):
        """p(tokens[i] | up to order - 1 characters before it) for every i >= 1: an array of len - 1."""
        ids = np.asarray(tokens, dtype=np.int64)
        pos = np.arange(1, len(ids))
        p = np.full(len(pos), 1.0 / self.V)
        for m in range(1, self.order + 1):
            codes, counts, ctx_keys, totals, types, D = self.tables[m]
            ok = pos >= m - 1                                  # a context of m - 1 characters exists
            c = np.zeros(len(pos), dtype=np.int64)
            for j in range(m - 1, 0, -1):
                c = c * self.V + np.where(ok, ids[np.maximum(pos - j, 0)], 0)
            gram = c * self.V + ids[pos]
            total = self._lookup(ctx_keys, totals, c)
            seen = ok & (total > 0)
            count = self._lookup(codes, counts, gram)
            mass = self._lookup(ctx_keys, types, c) * D
            safe = np.where(seen, total, 1)
            p = np.where(seen, np.maximum(count - D, 0) / safe + mass / safe * p, p)
        return p

    def cross_entropy(self, tokens, first=1):
        """Mean nats per character on tokens[first:]."""
        return float(-np.log(self.next_probs(tokens)[first - 1:]).mean())
