"""speclab.rules.trees: a tree's value adds up to the Markov-table answers, its price to 07's step model."""
import math

import numpy as np

from speclab import draft, target
from speclab.rules import candidates, trees as md
from speclab.speed import costs, hardware as hw

P = target()
DRAFTS = {kind: draft(kind) for kind in ("good", "middling", "poor")}


# --- trees ----------------------------------------------------------------------------------------

def test_tree_shapes_and_mask():
    assert md.tree_nodes(md.chain(5)) == 5 and md.tree_depth(md.chain(5)) == 5
    assert md.tree_nodes(md.full_tree([2, 3])) == 2 + 6 and md.tree_depth(md.full_tree([2, 3])) == 2
    mask = md.tree_mask(md.chain(3))
    assert (mask == np.tril(np.ones((4, 4), dtype=bool))).all(), "a chain's tree mask is the causal mask"
    parents, depths = md.tree_parents(md.full_tree([2, 2]))
    assert parents == [-1, 0, 1, 1, 0, 4, 4] and depths == [0, 1, 2, 2, 1, 2, 2]
    mask = md.tree_mask(md.full_tree([2, 2]))
    assert mask[3].tolist() == [True, True, False, True, False, False, False]


def test_chain_value_is_the_markov_table_answer():
    for Q in DRAFTS.values():
        M = np.minimum(P, Q)
        for k in (1, 2, 4):
            want, v = np.zeros(len(P)), np.ones(len(P))
            for _ in range(k):
                v = M @ v
                want += v
            assert np.allclose(md.tree_accepted(P, Q, md.chain(k)), want, atol=1e-12)
            start = np.eye(len(P))[0]
            rate, _ = costs.markov_round_stats(P, Q, k, start=start)
            assert abs(md.tree_accepted(P, Q, md.chain(k))[0] - rate * k) < 1e-12


def test_one_level_tree_is_the_chance_one_candidate_is_kept():
    for rule in ("mss", "recursive"):
        for Q in DRAFTS.values():
            for w in (1, 2, 3):
                got = md.tree_accepted(P, Q, md.full_tree([w]), rule)
                want = [candidates.acceptance(P[c], Q[c], w, rule) for c in range(len(P))]
                assert np.allclose(got, want, atol=1e-12)


def test_greedy_tree_size_and_limits():
    a = md.positional_acceptance(P, DRAFTS["middling"], 6)
    for budget in (1, 5, 17, 40):
        assert md.tree_nodes(md.greedy_tree(a, budget)) == budget
    assert md.greedy_tree([0.9, 0.0], 6) == md.chain(6), "with no second chance the best tree is a chain"
    assert md.greedy_tree([0.5, 0.5, 0.5], 3) == md.full_tree([3]), "equal ranks: width before depth for 3 nodes"


def test_tree_speedup_of_a_chain_is_07s_speedup():
    T, D = hw.load_model("llama-3-70b"), hw.load_model("llama-3.2-1b")
    acc = hw.accelerator("H100", cards=4)
    for k in (1, 4):
        for ctx, batch in ((0, 1), (0, 64), (0, 512), (1024, 249), (2048, 238), (4096, 119)):
            got = md.tree_speedup(md.chain(k), costs.expected_tokens(0.8, k) - 1, T, D, acc, ctx, batch)
            assert math.isclose(got, hw.speculative_speedup(T, D, acc, 0.8, k, ctx, batch), rel_tol=1e-12)
    # notebook 09's load table: per-kernel step times with the cache, at the memory cap
    ov = costs.DRAFT_STEP_OVERHEAD_S
    speed = lambda k, b, ctx: md.tree_speedup(md.chain(k), costs.expected_tokens(0.8, k) - 1, T, D, acc, ctx, b, ov)  # noqa: E731
    assert round(speed(4, 477, 1024), 2) == 0.92 and round(speed(1, 477, 1024), 2) == 1.08
    assert round(speed(2, 238, 2048), 2) == 1.32 and round(speed(2, 119, 4096), 2) == 1.90
    assert speed(4, 248, 1024) >= 1 > speed(4, 249, 1024)
    assert md.tree_speedup(md.chain(0), 0.0, T, D, acc) == 1.0, "no drafts: plain decoding"
    slower = md.tree_speedup(md.chain(4), 2.0, T, D, acc, overhead=costs.DRAFT_STEP_OVERHEAD_S)
    assert slower < md.tree_speedup(md.chain(4), 2.0, T, D, acc)
