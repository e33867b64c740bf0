"""The vectorised simulator and the exact enumeration, checked against each other and the loop.

Exact checks first (deterministic models whose every round is known; the correct
rule's exact joint equals the target's). The statistical checks compare simulated
counts with exact probabilities cell by cell, with Bernstein's inequality:
for a Binomial(n, p) count X and t > 0,
    P(|X/n - p| >= t) <= 2 exp(-n t^2 / (2 p (1 - p) + 2 t / 3)).
Every cell of every statistical check in this file gets the same share of a total
false-failure budget DELTA = 1e-7 (union bound over all cells: CELLS_IN_FILE below
counts them), so the chance that a correct simulator fails any test here is below
1e-7. The random generators are seeded, so a run is reproducible; the bound is what
makes the seeds incidental.
"""
import math

import numpy as np
import pytest

from speclab import draft, exact, roundview, simulate, target
from speclab.speculative import RULES, draft_tokens, speculative_joint, target_joint, tv_distance, verify_round

P = target()
GOOD, POOR = draft("good"), draft("poor")

DELTA = 1e-7
# Cells compared statistically in this file: 36 per joint x (4 rules x 2 settings) for the
# simulator, 36 x 4 rules for the loop, and (k + 1) accepted-count cells x 4 rules x 2 settings.
CELLS_IN_FILE = 36 * 8 + 36 * 4 + (4 + 1) * 4 + (2 + 1) * 4
LOG_TERM = math.log(2 * CELLS_IN_FILE / DELTA)  # each cell may fail with prob <= DELTA / CELLS_IN_FILE


def bernstein_tolerance(p, n, log_term=LOG_TERM):
    """The t that solves n t^2 = log_term (2 p (1 - p) + 2 t / 3): |X/n - p| >= t has prob <= 2 e^-log_term."""
    var = p * (1.0 - p)
    return (log_term / 3.0 + math.sqrt(log_term ** 2 / 9.0 + 2.0 * n * var * log_term)) / n


def assert_matches(freq, prob, n, what):
    """Every cell of the empirical frequencies `freq` (from n trials) within Bernstein's bound of `prob`."""
    freq, prob = np.asarray(freq, dtype=float).ravel(), np.asarray(prob, dtype=float).ravel()
    for cell, (f, p) in enumerate(zip(freq, prob)):
        tol = bernstein_tolerance(p, n)
        assert abs(f - p) < tol, f"{what}: cell {cell} has frequency {f:.5f}, exact {p:.5f} (bound {tol:.5f})"


# --- exact enumeration -------------------------------------------------------------

@pytest.mark.parametrize("Q", [GOOD, POOR, P], ids=["good", "poor", "perfect"])
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("ctx", [0, 3])
def test_exact_correct_rule_is_the_target(Q, k, ctx):
    J = exact.first_two_joint(P, Q, ctx, k, "correct")
    assert tv_distance(J, target_joint(P, ctx)) < 1e-13
    assert np.abs(exact.first_token_marginal(P, Q, "correct") - P).max() < 1e-15


@pytest.mark.parametrize("rule", RULES)
def test_exact_outcomes_are_a_distribution(rule):
    tokens, accepted, prob = exact.round_outcomes(P, GOOD, 0, 3, rule)
    assert abs(prob.sum() - 1.0) < 1e-12 and (prob > 0).all()
    emitted = (tokens >= 0).sum(axis=1)
    if rule == "continue":
        assert set(emitted[accepted < 3]) == {3} and set(emitted[accepted == 3]) == {4}
    else:
        assert (emitted == accepted + 1).all()
    # tokens are a prefix: nothing after the first -1
    assert all((row[row >= 0] == row[:n]).all() for row, n in zip(tokens, emitted))


def test_exact_broken_rules_drift():
    ref = target_joint(P, 0)
    tv = {rule: tv_distance(exact.first_two_joint(P, GOOD, 0, 4, rule), ref) for rule in RULES}
    assert tv["correct"] < 1e-13
    assert tv["greedy"] > tv["no_resample"] > tv["continue"] > 0.02


def test_expected_round_perfect_draft():
    acc, emitted = exact.expected_round(P, P, 0, 4, "correct")
    assert abs(acc - 4) < 1e-12 and abs(emitted - 5) < 1e-12


@pytest.mark.parametrize("rule", RULES)
def test_exact_agrees_with_the_loop(rule):
    """The reference loop, 20,000 trials from a fixed seed, against the enumeration, cell by cell."""
    n = 20_000
    J = speculative_joint(P, GOOD, 0, 4, n, np.random.default_rng(100), rule)
    assert_matches(J, exact.first_two_joint(P, GOOD, 0, 4, rule), n, f"loop vs exact ({rule})")


# --- the vectorised simulator: exact checks on deterministic models -------------------

CYCLE = np.roll(np.eye(6), 1, axis=1)      # t -> t + 1 (mod 6), with certainty
BACK = np.roll(np.eye(6), -1, axis=1)      # t -> t - 1 (mod 6)


@pytest.mark.parametrize("rule", RULES)
def test_perfect_deterministic_draft_accepts_everything(rule):
    r = simulate.rounds(CYCLE, CYCLE, np.array([0, 2, 5]), 3, np.random.default_rng(0), rule)
    assert r.tokens.tolist() == [[1, 2, 3, 4], [3, 4, 5, 0], [0, 1, 2, 3]]
    assert r.accepted.tolist() == [3, 3, 3] and r.emitted.tolist() == [4, 4, 4]
    assert r.last.tolist() == [4, 0, 3]


def test_always_rejected_draft():
    """The draft always says t - 1, the target t + 1: the first draft is rejected every time."""
    ctx = np.array([0, 3])
    for rule, expected, emitted in [("correct", [[1, -1, -1], [4, -1, -1]], 1),
                                    ("no_resample", [[1, -1, -1], [4, -1, -1]], 1),
                                    ("greedy", [[1, -1, -1], [4, -1, -1]], 1),
                                    ("continue", [[1, 4, -1], [4, 1, -1]], 2)]:
        r = simulate.rounds(CYCLE, BACK, ctx, 2, np.random.default_rng(1), rule)
        assert r.tokens.tolist() == expected, rule
        assert r.accepted.tolist() == [0, 0] and r.emitted.tolist() == [emitted] * 2, rule


def test_run_continues_from_the_last_token():
    run = simulate.run(CYCLE, CYCLE, 3, 50, np.random.default_rng(2), chains=5, ctx=1)
    assert run.rounds == 50 and run.accepted.shape == (5, 10)
    assert run.accept_rate == 1.0 and run.tokens_per_call == 4.0
    assert run.last.tolist() == [(1 + 10 * 4) % 6] * 5
    burned = simulate.run(CYCLE, CYCLE, 3, 50, np.random.default_rng(2), chains=5, ctx=1, burn_in=2)
    assert burned.rounds == 50 and burned.last.tolist() == [(1 + 12 * 4) % 6] * 5


# --- the vectorised simulator against the exact enumeration ---------------------------

SETTINGS = [(GOOD, 0, 4), (POOR, 3, 2)]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("setting", range(len(SETTINGS)), ids=["good-a-k4", "poor-d-k2"])
def test_vectorised_joint_matches_exact(rule, setting):
    Q, ctx, k = SETTINGS[setting]
    n = 200_000
    J = simulate.first_two_joint(P, Q, ctx, k, n, np.random.default_rng(200 + setting), rule)
    assert abs(J.sum() - 1.0) < 1e-12
    assert_matches(J, exact.first_two_joint(P, Q, ctx, k, rule), n, f"vectorised vs exact ({rule})")


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("setting", range(len(SETTINGS)), ids=["good-a-k4", "poor-d-k2"])
def test_vectorised_round_statistics_match_exact(rule, setting):
    """Accepted-count distribution of single rounds from ctx, and run()'s totals built from them."""
    Q, ctx, k = SETTINGS[setting]
    n = 200_000
    run = simulate.run(P, Q, k, n, np.random.default_rng(300 + setting), rule, ctx=ctx, chains=n)
    assert run.accepted.shape == (n, 1)    # n chains of one round each: independent rounds from ctx
    tokens, accepted, prob = exact.round_outcomes(P, Q, ctx, k, rule)
    exact_counts = np.bincount(accepted, weights=prob, minlength=k + 1)
    assert_matches(np.bincount(run.accepted.ravel(), minlength=k + 1) / n, exact_counts, n,
                   f"accepted drafts per round ({rule})")
    emitted = np.where((rule == "continue") & (run.accepted < k), k, run.accepted + 1)
    assert (run.emitted == emitted).all(), "emitted tokens must follow from the accepted count"
    assert run.accept_rate == run.accepted.sum() / (n * k)
    assert run.tokens_per_call == run.emitted.sum() / n


# --- the picture of one round follows the contract --------------------------------

@pytest.mark.parametrize("rule", RULES)
def test_trace_round_emits_what_verify_round_emits(rule):
    for seed in range(200):
        trace = roundview.trace_round(P, GOOD, 0, 4, np.random.default_rng(seed), rule)
        rng = np.random.default_rng(seed)
        expected = verify_round(P, GOOD, 0, draft_tokens(GOOD, 0, 4, rng), rng, rule)
        assert trace["emitted"] == expected
        assert sum(t["ok"] for t in trace["tests"]) == trace["stop"]
