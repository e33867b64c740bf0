"""Sampling with explicit uniforms, so every random choice can be scripted and checked.

The course's randomness contract: a sampling function takes an `rng` and uses it
only as `rng.random()`, one uniform per sampled token through `sample_from(dist, u)`
and one per accept test. Replace the rng with a ScriptedRNG and the same code
becomes a deterministic function of the uniforms you chose.
"""
import numpy as np


# Up to this many tokens a plain loop over the row is fastest; past it, the array's own methods (a
# NumPy function adds a dispatch layer per call). Notebook 04's experiment cells call sample_from
# over two million times, 08's about 300,000 per experiment.
LOOP_MAX = 16


def sample_from(p, u):
    """The smallest i with cumsum(p)[i] > u (inverse-CDF sampling with one uniform)."""
    p = p if type(p) is np.ndarray and p.dtype == np.float64 else np.asarray(p, dtype=float)
    if p.ndim == 1 and len(p) <= LOOP_MAX:
        row = p.tolist()
        if min(row) >= 0:  # a row with a negative entry is no distribution: the general path below
            cdf = 0.0  # the same sums in the same order as cumsum, so the same token, bit for bit
            for i, x in enumerate(row):
                cdf += x
                if u < cdf:
                    return i
    cdf = p.cumsum()
    i = int(cdf.searchsorted(u, side="right"))
    # Rounding can leave cdf[-1] a hair below u; the last token with mass is the answer then.
    return i if i < len(cdf) else int(np.flatnonzero(p > 0)[-1])


class ScriptedRNG:
    """A stand-in for numpy's Generator whose random() returns uniforms you chose, in order.

    >>> rng = ScriptedRNG([0.5, 0.99])
    >>> rng.random(), rng.random(), rng.calls
    (0.5, 0.99, 2)
    """

    def __init__(self, uniforms):
        self.uniforms = [float(u) for u in uniforms]
        for u in self.uniforms:
            if not 0.0 <= u < 1.0:
                raise ValueError(f"a uniform must lie in [0, 1), got {u}")
        self.calls = 0

    def random(self, size=None):
        if size is not None:
            raise TypeError("the randomness contract is one rng.random() call per draw, with no size")
        if self.calls >= len(self.uniforms):
            raise RuntimeError(
                f"rng.random() was called {self.calls + 1} times but only {len(self.uniforms)} "
                "uniforms were scripted: the code draws more random numbers than the contract allows")
        u = self.uniforms[self.calls]
        self.calls += 1
        return u

    @property
    def left(self):
        """How many scripted uniforms were not used."""
        return len(self.uniforms) - self.calls

    def __getattr__(self, attr):
        raise AttributeError(
            f"the randomness contract allows only rng.random(); this code called rng.{attr}")
