"""speclab.rules.sampling: sample_from(p, u) is the inverse CDF, and the scripted rng holds tests to the contract."""
import numpy as np
import pytest

from speclab import ScriptedRNG, sample_from


def test_sample_from_is_inverse_cdf():
    p = [0.2, 0.0, 0.5, 0.3]
    assert [sample_from(p, u) for u in (0.0, 0.1999, 0.2, 0.69, 0.7, 0.999999)] == [0, 0, 2, 2, 3, 3]
    assert sample_from([0.5, 0.5, 0.0], 0.9999999999999999) == 1, "never returns a zero-probability token"


def inverse_cdf(p, u):
    """The definition, with NumPy's cumsum and searchsorted (sample_from's path for long rows)."""
    cdf = np.cumsum(p)
    i = int(np.searchsorted(cdf, u, side="right"))
    return i if i < len(cdf) else int(np.flatnonzero(p > 0)[-1])


def test_sample_from_takes_the_same_token_as_the_numpy_definition():
    """Both of sample_from's paths (a loop for short rows, which adds in np.cumsum's order; the array's own
    methods past it) pick the definition's token, even for a uniform that sits exactly on a step of the CDF
    or one float either side of it; rows with zeros, every size up to just past the loop's limit, and long
    rows (08's alphabet has 96 characters); lists as well as arrays."""
    from speclab.rules.sampling import LOOP_MAX

    rng = np.random.default_rng(3)
    checked = 0
    for n in list(range(1, LOOP_MAX + 3)) + [64, 96, 200]:
        for concentration in (0.1, 1.0, 10.0):
            p = rng.dirichlet(np.full(n, concentration))
            p[rng.random(n) < 0.25] = 0.0
            if not p.any():
                p[-1] = 1.0
            steps = np.cumsum(p)[:-1]
            us = np.concatenate([rng.random(8), steps, np.nextafter(steps, 0), np.nextafter(steps, 1),
                                 [0.0, np.nextafter(1.0, 0)]])
            for u in us[(us >= 0) & (us < 1)].tolist():
                assert sample_from(p, u) == inverse_cdf(p, u) == sample_from(p.tolist(), u), (n, u, p.tolist())
                checked += 1
    assert checked > 4_000
    # a row that is not a distribution goes the general way, as before
    assert sample_from(np.array([0.5, -0.25, 0.75]), 0.3) == inverse_cdf(np.array([0.5, -0.25, 0.75]), 0.3)


def test_scripted_rng_enforces_the_contract():
    rng = ScriptedRNG([0.25, 0.5])
    assert (rng.random(), rng.random(), rng.left) == (0.25, 0.5, 0)
    with pytest.raises(RuntimeError):
        rng.random()
    with pytest.raises(AttributeError):
        ScriptedRNG([0.1]).choice(3)
    with pytest.raises(TypeError):
        ScriptedRNG([0.1]).random(size=3)
    with pytest.raises(ValueError):
        ScriptedRNG([1.0])
