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

Why one module of about 400 lines: it mirrors speclab/decoding/simulate.py (tests/speclab/test_<module>.py),
and its statistical checks carry their arithmetic in comments.
"""
import math

import numpy as np
import pytest

from speclab import draft, target
from speclab.rules import exact
from speclab.decoding import simulate
from speclab.rules.speculative import (
    RULES,
    draft_tokens,
    speculative_joint,
    target_joint,
    tv_distance,
    verify_round,
)

P = target()
GOOD, POOR = draft("good"), draft("poor")

DELTA = 1e-7
# Cells compared statistically in this file: 36 per joint x (4 rules x 2 settings) for the
# simulator, 36 x 4 rules for the loop, (k + 1) accepted-count cells x 4 rules x 2 settings, and
# 216 per three-token joint x 4 rules for the simulator's windows.
CELLS_IN_FILE = 36 * 8 + 36 * 4 + (4 + 1) * 4 + (2 + 1) * 4 + 216 * 4
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
    J = exact.first_two_probabilities(P, Q, ctx, k, "correct")
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
    tv = {rule: tv_distance(exact.first_two_probabilities(P, GOOD, 0, 4, rule), ref) for rule in RULES}
    assert tv["correct"] < 1e-13
    assert tv["greedy"] > tv["no_resample"] > tv["continue"] > 0.02


def _by_outcomes(P_, Q_, k, rule):
    """Round distributions by length, summed row by row from round_outcomes (the slow, plain way)."""
    V = len(P_)
    R = {L: np.zeros((V, V ** L)) for L in range(1, k + 2)}
    for c in range(V):
        tokens, _, prob = exact.round_outcomes(P_, Q_, c, k, rule)
        for row, pr in zip(tokens.tolist(), prob.tolist()):
            seq = [t for t in row if t >= 0]
            R[len(seq)][c, int(np.ravel_multi_index(seq, (V,) * len(seq)))] += pr
    return R


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("k", [1, 2, 3])
def test_dense_round_distributions_match_the_outcome_list(rule, k):
    for Q in (GOOD, POOR, P):
        exact._ROUND_CACHE.clear()
        dense, plain = exact._rounds_by_length(P, Q, k, rule), _by_outcomes(P, Q, k, rule)
        assert sorted(dense) == sorted(plain)
        for L in plain:
            assert np.abs(dense[L] - plain[L]).max() < 1e-15, (rule, k, L)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("k", [1, 2, 4])
def test_windows_chain_rounds_exactly(rule, k):
    """A window of two is first_two_probabilities; the correct rule's window of any length is the target's."""
    for ctx in (0, 4):
        two = exact.first_tokens_joint(P, GOOD, ctx, k, 2, rule)
        assert np.abs(two - exact.first_two_probabilities(P, GOOD, ctx, k, rule)).max() < 1e-15
        for n in (1, 3, 4):
            J = exact.first_tokens_joint(P, GOOD, ctx, k, n, rule)
            assert J.shape == (6,) * n and abs(J.sum() - 1) < 1e-12
            if rule == "correct":
                assert np.abs(J - exact.target_tokens_joint(P, ctx, n)).max() < 1e-15
    T3 = exact.target_tokens_joint(P, 2, 3)
    assert abs(T3[1, 4, 5] - P[2, 1] * P[1, 4] * P[4, 5]) < 1e-18


def test_a_window_of_n_tokens_is_blind_to_k_beyond_n():
    """Notebook 04's break-it: the two-token window gives the same TV for every k >= 2."""
    for rule in RULES[1:]:
        for n in (1, 2, 3):
            tvs = [exact.window_tv(P, GOOD, 0, k, n, rule) for k in range(n, 6)]
            assert max(tvs) - min(tvs) < 1e-14, (rule, n, tvs)
    assert exact.window_tv(P, GOOD, 0, 1, 2, "continue") < 1e-15, "with k = 1 nothing is stale"
    assert exact.window_tv(P, GOOD, 0, 3, 3, "continue") > exact.window_tv(P, GOOD, 0, 2, 3, "continue") + 0.04


def test_the_figures_notebook_04_quotes():
    tv = {(n, rule): exact.window_tv(P, GOOD, 0, 4, n, rule) for n in (1, 2, 3, 4) for rule in RULES}
    quoted = {(1, "greedy"): 0.1232, (2, "greedy"): 0.2707, (2, "no_resample"): 0.0369, (2, "continue"): 0.0295,
              (3, "no_resample"): 0.0405, (3, "continue"): 0.0777, (4, "no_resample"): 0.0440,
              (4, "continue"): 0.1128, (1, "no_resample"): 0.0360}
    for key, value in quoted.items():
        assert round(tv[key], 4) == value, (key, tv[key])
    assert all(tv[(n, "correct")] < 1e-14 for n in (1, 2, 3, 4))
    assert list(exact.window_tvs(P, GOOD, 0, 4, 4, "continue")) == [tv[(n, "continue")] for n in (1, 2, 3, 4)]


def test_expected_sampling_tv_is_the_binomial_mean_absolute_deviation():
    """A perfect sampler's expected TV, from de Moivre's closed form, against the plain binomial sum."""
    for dist, n in (([0.5, 0.3, 0.2], 10), ([0.9, 0.05, 0.05], 7), ([0.25] * 4, 40), ([1.0, 0.0], 5)):
        plain = 0.5 / n * sum(math.comb(n, x) * p ** x * (1 - p) ** (n - x) * abs(x - n * p)
                              for p in dist for x in range(n + 1))
        assert abs(exact.expected_sampling_tv(dist, n) - plain) < 1e-12, (dist, n)
    J = target_joint(P, 0)
    normal = float(np.sqrt(J * (1 - J) / (2 * np.pi * 60_000)).sum())
    assert abs(exact.expected_sampling_tv(J, 60_000) - normal) < 1e-5, "many samples: the normal approximation"


def test_expected_round_perfect_draft():
    acc, emitted = exact.expected_round(P, P, 0, 4, "correct")
    assert abs(acc - 4) < 1e-12 and abs(emitted - 5) < 1e-12


@pytest.mark.parametrize("rule", RULES)
def test_exact_agrees_with_the_loop(rule):
    """The reference loop, 20,000 trials from a fixed seed, against the enumeration, cell by cell."""
    n = 20_000
    J = speculative_joint(P, GOOD, 0, 4, n, np.random.default_rng(100), rule)
    assert_matches(J, exact.first_two_probabilities(P, GOOD, 0, 4, rule), n, f"loop vs exact ({rule})")


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


def test_first_tokens_on_deterministic_models():
    T = simulate.first_tokens(CYCLE, CYCLE, 2, 2, 5, 3, np.random.default_rng(0))
    assert T.tolist() == [[3, 4, 5, 0, 1]] * 3, "rounds chain from the last emitted token"
    T = simulate.first_tokens(CYCLE, BACK, 0, 3, 4, 2, np.random.default_rng(0), "continue")
    assert T.tolist() == [[1, 4, 3, 4]] * 2, "continue: the fix-up 1, stale drafts 4 and 3, then a new round from 3"
    T = simulate.first_tokens(CYCLE, BACK, 0, 3, 4, 2, np.random.default_rng(0))
    assert T.tolist() == [[1, 2, 3, 4]] * 2, "every draft rejected: one token per round"


# --- the vectorised simulator against the exact enumeration ---------------------------

SETTINGS = [(GOOD, 0, 4), (POOR, 3, 2)]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("setting", range(len(SETTINGS)), ids=["good-a-k4", "poor-d-k2"])
def test_vectorised_joint_matches_exact(rule, setting):
    Q, ctx, k = SETTINGS[setting]
    n = 200_000
    J = simulate.first_two_frequencies(P, Q, ctx, k, n, np.random.default_rng(200 + setting), rule)
    assert abs(J.sum() - 1.0) < 1e-12
    assert_matches(J, exact.first_two_probabilities(P, Q, ctx, k, rule), n, f"vectorised vs exact ({rule})")


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


@pytest.mark.parametrize("rule", RULES)
def test_vectorised_three_token_window_matches_exact(rule):
    n = 200_000
    T = simulate.first_tokens(P, GOOD, 0, 4, 3, n, np.random.default_rng(400), rule)
    J = np.bincount(T[:, 0] * 36 + T[:, 1] * 6 + T[:, 2], minlength=216) / n
    assert_matches(J, exact.first_tokens_joint(P, GOOD, 0, 4, 3, rule), n, f"three-token window ({rule})")


# --- every form of the round is the one round (speclab.rules.speculative.verify_drafts) --------
# simulate.py (vectorised) and exact.py (enumeration) keep their own forms of the rules;
# these exact checks tie each of them to the one round, outcome by outcome.

from collections import defaultdict  # noqa: E402

from speclab.decoding import textspec  # noqa: E402
from speclab.rules.sampling import ScriptedRNG  # noqa: E402
from speclab.rules.speculative import TableRows, accept_prob, residual, verify_drafts  # noqa: E402


class _Blocks:
    """A stand-in Generator whose random(size) returns the arrays given, in order (simulate draws
    three blocks per batch of rounds: the drafts' uniforms (k, n), the accept tests' (k, n), the
    last token's (n,))."""

    def __init__(self, *blocks):
        self.blocks = list(blocks)

    def random(self, size):
        block = self.blocks.pop(0)
        assert block.shape == tuple(np.atleast_1d(size)), (block.shape, size)
        return block


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("Q,k", [(GOOD, 4), (POOR, 2), (draft("middling"), 1), (GOOD, 6)],
                         ids=["good-k4", "poor-k2", "middling-k1", "good-k6"])
def test_vectorised_rounds_are_the_round(rule, Q, k):
    """Each of 3,000 vectorised rounds, fed known uniforms, emits exactly what the one round emits on them.

    The round takes its uniforms in the contract's order: k drafts, then one per accept test, then one
    for the last token; how many tests it makes (its stop) says which uniform was the last token's.
    """
    n = 3_000
    g = np.random.default_rng(10 * RULES.index(rule) + k)
    ctx = g.integers(6, size=n)
    u_draft, u_verify = g.random((k, n)), g.random((k + 1, n))
    u_end = np.empty(n)
    rounds = []
    for i in range(n):
        rng = ScriptedRNG(u_draft[:, i].tolist() + u_verify[:, i].tolist())
        drafted = draft_tokens(Q, int(ctx[i]), k, rng)
        out, stop = verify_drafts(drafted, TableRows(P, Q, [int(ctx[i])] + drafted), rng, rule)
        u_end[i] = u_verify[rng.calls - k - 1, i]        # the uniform the round's last token used
        rounds.append((out, stop))
    r = simulate.rounds(P, Q, ctx, k, _Blocks(u_draft, u_verify[:k], u_end), rule)
    for i, (out, stop) in enumerate(rounds):
        assert r.tokens[i].tolist() == out + [-1] * (k + 1 - len(out)), (i, rule)
        assert (r.accepted[i], r.emitted[i]) == (stop, len(out)), (i, rule)


# Two small bigram models whose every decision boundary is listed: a round is then an exact,
# finite sum over the gaps between boundaries. NICE's probabilities are quarters (four gaps; a tie
# in row 2 for greedy), TENTHS has generic values (about 25 gaps, so only k = 1 is cheap).
NICE_P = np.array([[0.5, 0.25, 0.25], [0.25, 0.25, 0.5], [0.0, 0.5, 0.5]])
NICE_Q = np.array([[0.25, 0.5, 0.25], [0.5, 0.25, 0.25], [0.25, 0.25, 0.5]])
TENTHS_P = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.4, 0.4, 0.2]])
TENTHS_Q = np.array([[0.2, 0.3, 0.5], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]])


def _cuts(P_, Q_):
    """Every value a uniform is compared with in a round: accept ratios and the CDFs it samples."""
    V = len(P_)
    cuts = {0.0, 1.0}
    for c in range(V):
        for dist in (P_[c], Q_[c], residual(P_[c], Q_[c])):
            cuts.update(np.cumsum(dist).tolist())
        cuts.update(accept_prob(P_[c], Q_[c], x) for x in range(V) if Q_[c, x] > 0)
    return sorted(u for u in cuts if 0.0 <= u <= 1.0)


def _law(play, cuts):
    """{result: probability} of play(rng) with independent uniforms: play is a function of its uniforms
    that is constant between consecutive cuts, so one midpoint per gap, weighted by the gap's width, gives
    the exact law. Depth first: a run that asks for one more uniform than scripted branches on it."""
    gaps = [((a + b) / 2, b - a) for a, b in zip(cuts, cuts[1:]) if a < (a + b) / 2 < 1.0]  # < 1: a uniform
    law = defaultdict(float)

    def explore(prefix, weight):
        try:
            result = play(ScriptedRNG(prefix))
        except RuntimeError:
            for u, w in gaps:
                explore(prefix + [u], weight * w)
            return
        law[result] += weight

    explore([], 1.0)
    return law


def _round_law(P_, Q_, ctx, k, rule):
    """{(emitted tokens, drafts accepted): probability} of one round (draft_tokens, then the one round)."""
    cuts = _cuts(P_, Q_)
    law = defaultdict(float)
    for drafted, p_drafted in _law(lambda rng: tuple(draft_tokens(Q_, ctx, k, rng)), cuts).items():
        rows = TableRows(P_, Q_, [ctx] + list(drafted))

        def play(rng):
            out, stop = verify_drafts(list(drafted), rows, rng, rule)
            return tuple(out), stop
        for outcome, p in _law(play, cuts).items():
            law[outcome] += p_drafted * p
    return law


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("P_,Q_,k", [(NICE_P, NICE_Q, 1), (NICE_P, NICE_Q, 2), (NICE_P, NICE_Q, 3),
                                     (TENTHS_P, TENTHS_Q, 1), (TENTHS_Q, TENTHS_P, 1)],
                         ids=["nice-k1", "nice-k2", "nice-k3", "tenths-k1", "tenths-swapped-k1"])
def test_exact_outcomes_are_the_rounds_law(rule, P_, Q_, k):
    """exact.round_outcomes, summed by (tokens, accepted), equals the one round's law, enumerated exactly."""
    for ctx in range(len(P_)):
        tokens, accepted, prob = exact.round_outcomes(P_, Q_, ctx, k, rule)
        listed = defaultdict(float)
        for row, a, p in zip(tokens.tolist(), accepted.tolist(), prob.tolist()):
            listed[tuple(t for t in row if t >= 0), a] += p
        law = _round_law(P_, Q_, ctx, k, rule)
        for outcome in set(law) | set(listed):
            assert abs(law[outcome] - listed[outcome]) < 1e-12, (rule, ctx, outcome, law[outcome], listed[outcome])


@pytest.mark.parametrize("rule", RULES)
def test_textspec_round_on_a_bigram_model_is_the_round(rule):
    """textspec's round, with models that read only the last token, is speculative's round on the same uniforms."""
    g = np.random.default_rng(7)
    for Q in (GOOD, POOR):
        target_model, draft_model = (lambda c: P[c[-1]]), (lambda c, Q=Q: Q[c[-1]])
        for _ in range(300):
            ctx, k = int(g.integers(6)), int(g.integers(1, 6))
            us = g.random(2 * k + 1).tolist()
            mine, theirs = ScriptedRNG(us), ScriptedRNG(us)
            drafted = draft_tokens(Q, ctx, k, mine)
            assert textspec.draft_tokens(draft_model, [3, ctx], k, theirs) == drafted
            want = verify_round(P, Q, ctx, drafted, mine, rule)
            got, kinds = textspec.play_round(target_model, draft_model, [3, ctx], drafted, theirs, rule)
            assert got == want and theirs.calls == mine.calls, (rule, ctx, drafted, us)
            stop = kinds.count("accepted")
            assert kinds[:stop] == ["accepted"] * stop and got[:stop] == drafted[:stop]
            assert kinds[stop] == ("bonus" if stop == k else "resampled"), kinds


# --- sweep: every k's run at once (notebook 05's widget) ------------------------------

@pytest.mark.parametrize("rule", RULES)
def test_sweep_is_run_for_each_k_to_the_last_digit(rule):
    """Same uniforms, same comparisons: each k's Run equals run's, rounds, last tokens and all, for
    ks in any order (and a k twice), chains that continue across rounds, and a burn-in."""
    ks = [3, 1, 6, 2, 3]
    for Q, ctx in ((GOOD, 0), (POOR, 3), (P, 1)):
        runs = simulate.sweep(P, Q, ks, 120, [np.random.default_rng(50 + i) for i in range(len(ks))], rule,
                              ctx=ctx, chains=7, burn_in=2)
        for i, (k, got) in enumerate(zip(ks, runs)):
            want = simulate.run(P, Q, k, 120, np.random.default_rng(50 + i), rule, ctx=ctx, chains=7, burn_in=2)
            assert got.k == k and got.rounds == want.rounds
            for field in ("accepted", "emitted", "last"):
                assert np.array_equal(getattr(got, field), getattr(want, field)), f"{rule}, k = {k}: {field} differs"
    with pytest.raises(ValueError):
        simulate.sweep(P, GOOD, [0, 2], 10, [np.random.default_rng(0)] * 2)
