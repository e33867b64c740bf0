"""speclab.rules.speculative: the reference one-token rule and the speculative round every other round is tested against."""
import numpy as np
import pytest

from speclab import ScriptedRNG, draft, sample_from, target
from speclab.rules import speculative as S


def test_one_token_rule_on_row_a():
    p, q = target()[0], draft("good")[0]
    assert S.accept_prob(p, q, 1) == 1.0
    assert round(S.accept_prob(p, q, 4), 4) == 0.8532
    assert np.round(S.residual(p, q), 4).tolist() == [0.1673, 0.6457, 0.1838, 0.0032, 0.0, 0.0]
    assert np.allclose(S.residual(p, p), p)
    assert abs(S.acceptance_rate(p, q) - (1 - S.tv_distance(p, q))) < 1e-12


def test_speculative_sample_uses_the_contract():
    p, q = target()[0], draft("good")[0]
    # u=0.95 drafts 'f' (q's cdf passes .95 at f); p[f] < q[f], accept prob .955: u=0.99 rejects it
    rng = ScriptedRNG([0.95, 0.99, 0.5])
    assert S.speculative_sample(p, q, rng) == sample_from(S.residual(p, q), 0.5) and rng.left == 0
    rng = ScriptedRNG([0.5, 0.1])
    assert S.speculative_sample(p, q, rng) == 4 and rng.left == 0, "'e' drafted and kept: two uniforms"


def test_verify_round_rules_on_scripted_uniforms():
    P, Q = target(), draft("good")
    drafted = [4, 5, 0, 4]
    # all four accepted (u = 0 always passes), then the bonus from P[drafted[-1]]
    assert S.verify_round(P, Q, 0, drafted, ScriptedRNG([0, 0, 0, 0, 0.5])) == drafted + [sample_from(P[4], 0.5)]
    # the first test fails (u just under 1 and p/q < 1 for 'e' after 'a'): one residual token
    out = S.verify_round(P, Q, 0, drafted, ScriptedRNG([0.9999, 0.3]))
    assert out == [sample_from(S.residual(P[0], Q[0]), 0.3)]
    assert S.verify_round(P, Q, 0, drafted, ScriptedRNG([0.9999, 0.3]), "no_resample") == [sample_from(P[0], 0.3)]
    assert S.verify_round(P, Q, 0, drafted, ScriptedRNG([0.9999, 0.3]), "continue") == out + [5, 0, 4]
    with pytest.raises(ValueError):
        S.verify_round(P, Q, 0, drafted, ScriptedRNG([]), "lenient")


def test_seed_experiment_correct_rule_and_floor():
    P, Q = target(), draft("good")
    J = S.target_joint(P, 0)
    assert abs(J.sum() - 1) < 1e-12
    tv = S.tv_distance(S.speculative_joint(P, Q, 0, 4, 60000, np.random.default_rng(10)), J)
    floor = S.tv_distance(S.speculative_joint(P, P, 0, 1, 60000, np.random.default_rng(11)), J)
    assert (round(tv, 4), round(floor, 4)) == (0.0079, 0.0059)


def test_greedy_speculation_matches_plain_greedy():
    P = target()
    plain = S.greedy_decode(P, 0, 48)[0]
    for kind, calls in (("good", 10), ("middling", 17), ("poor", 48)):
        assert S.speculative_greedy(P, draft(kind), 0, 48, 4) == (plain, calls)
        assert len(S.greedy_rounds(P, draft(kind), 0, 48, 4)) == calls


def test_rounds_with_accuracy_bounds():
    rng = np.random.default_rng(0)
    assert S.rounds_with_accuracy(1.0, 4, 20, rng) == [5, 5, 5, 5]
    assert S.rounds_with_accuracy(0.0, 4, 3, rng) == [1, 1, 1]
