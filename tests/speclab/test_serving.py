"""speclab.speed.serving: 07's demos priced by the learner's functions once they work, the course's until then."""
import pytest

from speclab.speed import hardware as hw, serving

T, D = hw.load_model("llama-3-70b"), hw.load_model("llama-3.2-1b")
FOUR = hw.accelerator("H100", cards=4)


def unsolved(*args, **kwargs):
    raise NotImplementedError()


def explainer(cfg, acc, n_tokens, ctx, batch=1):   # a learner's step that works but prices no cache
    return hw.explainer_step_time(cfg, acc, n_tokens, ctx, batch)


def same(a, b):
    """Two deployment dicts hold the same numbers (arrays compared element by element)."""
    assert a.keys() == b.keys()
    for key in a:
        assert (a[key] == b[key]).all() if hasattr(a[key], "all") else a[key] == b[key], key


def test_an_unsolved_learner_gets_the_course_numbers_exactly():
    course = serving.deployment("H100", context=1024, batch=100)
    same(serving.deployment("H100", context=1024, batch=100, step=unsolved, weights=unsolved), course)
    assert course["slower_batch"] == 249 and course["max_batch"] == 477 and len(course["batches"]) == 477
    assert serving.round_times(T, D, FOUR, 4, 0, step=unsolved) == hw.round_times(T, D, FOUR, 4, 0)
    assert serving.crossover_batch(T, FOUR, 5, weights=unsolved, macs=unsolved) == hw.crossover_batch(T, FOUR, 5)
    mm, att = serving.kernel_times(T, FOUR, 5, 2048, 238, step=unsolved)
    assert mm == hw.kernel_times(T, FOUR, 5, 2048, 238)[0]
    assert att == pytest.approx(hw.kernel_times(T, FOUR, 5, 2048, 238)[1], rel=1e-12)


def test_a_solved_learner_prices_every_pass_and_counts_the_weights():
    mine = serving.deployment("H100", context=4096, batch=1, overhead_ms=0.0, step=explainer)
    # the explainer's price reads no cache, so speculation never turns slower at 4,096 context (the course's
    # does not either, but its speedup at batch 119 is lower): every point of the curve is the learner's
    want = [hw.speculative_speedup(T, D, FOUR, 0.8, 4, 4096, b, step=explainer) for b in (1, 60, 119)]
    assert [mine["speedup_curve"][b - 1] for b in (1, 60, 119)] == pytest.approx(want, rel=1e-12)
    assert mine["speedup_curve"][118] != pytest.approx(
        serving.deployment("H100", context=4096, overhead_ms=0.0)["speedup_curve"][118], rel=1e-3)
    assert mine["plain_ms"] == pytest.approx(1e3 * hw.explainer_step_time(T, FOUR, 1, 4096, 1), rel=1e-12)

    def heavier(cfg, bytes_per_param=2):   # a learner who counts every weight twice
        return 2 * hw.weight_bytes(cfg, bytes_per_param)
    doubled = serving.deployment("H100", context=4096, batch=60, weights=heavier)
    fit = int((FOUR["memory"] - heavier(T) - heavier(D)) // (hw.kv_cache_bytes(T, 4096) + hw.kv_cache_bytes(D, 4096)))
    assert doubled["max_batch"] == fit == len(doubled["batches"]) < 119
    assert doubled["weights_gb"] == pytest.approx(2 * (hw.weight_bytes(T) + hw.weight_bytes(D)) / 1e9)
    assert serving.crossover_batch(T, FOUR, 5, weights=heavier, macs=hw.forward_macs) == pytest.approx(
        2 * hw.crossover_batch(T, FOUR, 5))
    assert serving.round_times(T, D, FOUR, 4, 2048, step=explainer, batch=8) == hw.round_times(
        T, D, FOUR, 4, 2048, 8, step=explainer)


def test_a_batch_that_does_not_fit_has_no_speedup_and_the_curves_stop_at_the_memory():
    big = serving.deployment("H100", context=4096, batch=512, step=unsolved, weights=unsolved)
    assert not big["fits"] and big["speedup"] is None and big["max_batch"] == 119 and round(big["memory_gb"]) == 899
    assert len(big["batches"]) == len(big["speedup_curve"]) == 119


def test_curves_kept_between_moves_are_reused_and_keyed_by_the_step():
    calls, curves = [], {}

    def counted(cfg, acc, n_tokens, ctx, batch=1):
        calls.append(batch)
        return hw.step_time(cfg, acc, n_tokens, ctx, batch)
    first = serving.deployment("H100", context=1024, batch=1, step=counted, curves=curves)
    n = len(calls)
    assert n == 3 * 477 + 3   # three curves over the 477 batches that fit, and one round at the chosen batch
    moved = serving.deployment("H100", context=1024, batch=2, a=0.7, step=counted, curves=curves)
    assert len(calls) == n + 3 and moved["slower_batch"] != first["slower_batch"]
    serving.deployment("H100", context=1024, batch=2, step=explainer, curves=curves)
    assert len(calls) == n + 3 and len(curves) == 6, "another step has curves of its own"
