"""speclab.rules.streaks: notebook 05's streaky acceptance, its exact answers and the bound."""
import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from speclab.speed.costs import expected_tokens
from speclab.plumbing.pending import needs
from speclab.rules.streaks import (
    bound,
    markov_bits_exact,
    replay,
    round_start_pair,
    streaky_bits,
    transition,
)


@pytest.mark.parametrize("k", [1, 2, 5, 9])
def test_independent_bits_give_the_formula_exactly(k):
    tokens, alpha_run, survival = markov_bits_exact(0.65, 0.0, k)
    assert tokens == pytest.approx(expected_tokens(0.65, k), abs=1e-12)
    assert alpha_run == pytest.approx(0.65, abs=1e-12)
    assert survival == pytest.approx([0.65 ** j for j in range(k + 1)], abs=1e-12)


def test_the_notebooks_exact_figures():
    # notebook 05, section 8: alpha = 0.65, k = 5, rho = 0.5 / 0.8 / 0.95
    got = {rho: markov_bits_exact(0.65, rho, 5) for rho in (0.5, 0.8, 0.95)}
    assert [round(got[r][0], 3) for r in (0.5, 0.8, 0.95)] == [2.418, 2.274, 2.205]
    assert round(got[0.8][1], 3) == 0.620 and round(got[0.8][2][1], 3) == 0.293 and round(got[0.8][2][5], 3) == 0.219
    assert round(expected_tokens(got[0.8][1], 5), 2) == 2.48
    tokens, alpha_run, starts = round_start_pair([0.95, 0.35], [0.5, 0.5], 5)
    assert (round(tokens, 3), round(alpha_run, 3), starts) == (3.417, 0.798, pytest.approx(0.65))
    assert round(expected_tokens(alpha_run, 5), 3) == 3.675


@pytest.mark.parametrize("rho", [0.0, 0.3, 0.8, 0.95])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_identity_and_bound_hold_for_every_process(rho, k):
    tokens, alpha_run, survival = markov_bits_exact(0.65, rho, k)
    assert sum(survival) == pytest.approx(tokens, abs=1e-12)
    assert tokens == pytest.approx(1 + alpha_run / (1 - alpha_run) * (1 - survival[k]), abs=1e-12)
    assert tokens <= bound(alpha_run) + 1e-12
    if rho > 0 and k > 1:
        assert tokens < expected_tokens(0.65, k) and tokens < expected_tokens(alpha_run, k)   # over-predicts


def test_bits_keep_their_mean_and_correlation():
    stay, enter = transition(0.65, 0.8)
    assert 0.65 * stay + 0.35 * enter == pytest.approx(0.65) and stay - enter == pytest.approx(0.8)
    bits = np.array(streaky_bits(0.65, 0.0, 200_000, np.random.default_rng(1)))
    # i.i.d. bits: the share of ones has sd sqrt(0.65 * 0.35 / 2e5) = 0.00107; 0.007 is 6.5 sd,
    # a false failure below 1e-10.
    assert abs(bits.mean() - 0.65) < 0.007


@pytest.mark.parametrize("rho", [0.0, 0.8])
def test_replay_of_simulated_bits_matches_the_exact_chain(rho):
    # 400,000 bits; the spread of tokens per call over repeated runs of 50,000 bits was 0.013 (rho 0)
    # and 0.027 (rho 0.8), so about 0.0045 and 0.0095 here. Tolerance 0.06 is over 6 of those: a
    # false failure below 1e-9.
    tokens, alpha_run, survival = replay(streaky_bits(0.65, rho, 400_000, np.random.default_rng(7)), 5)
    exact = markov_bits_exact(0.65, rho, 5)
    assert abs(tokens - exact[0]) < 0.06 and abs(alpha_run - exact[1]) < 0.02
    assert sum(survival) == pytest.approx(tokens, abs=1e-12)


def test_replay_counts_by_hand():
    assert replay([1, 0, 1, 1, 1, 0, 0, 1, 1, 1], 2) == (2.0, 0.625, [1.0, 0.6, 0.4])
    with pytest.raises(ValueError):
        replay([1, 1], 2)


def test_needs_prints_one_line_and_lets_other_errors_through():
    out = io.StringIO()
    with redirect_stdout(out), needs("Exercise X (f)"):
        raise NotImplementedError()
    assert out.getvalue().count("\n") == 1 and "Exercise X (f)" in out.getvalue()
    with pytest.raises(ValueError), needs("Exercise X (f)"):
        raise ValueError("a real mistake")
