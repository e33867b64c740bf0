"""speclab.speed.hardware and its data: the figures notebook 07 prints, reproduced and corrected."""
import json
import math

import numpy as np
import pytest

from speclab.speed import hardware as hw, serving
from speclab.speed.costs import DRAFT_STEP_OVERHEAD_S, draft_cost, expected_tokens
from speclab.rules.speculative import rounds_with_accuracy

PARAMS = {"llama-2-7b": 6_738_415_616, "llama-3-70b": 70_553_706_496, "llama-3.2-1b": 1_235_814_400}


@pytest.fixture
def cfg7():
    return hw.load_model("llama-2-7b")


@pytest.fixture
def deployment():
    return hw.load_model("llama-3-70b"), hw.load_model("llama-3.2-1b"), hw.accelerator("H100", cards=4)


# --- data ------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(hw.MODELS))
def test_every_model_config_names_its_source_and_has_the_fields_used(key):
    cfg = hw.load_model(key)
    assert "huggingface.co/meta-llama/" in cfg["source"] and "config.json" in cfg["source"]
    for field in ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                  "num_key_value_heads", "vocab_size", "tie_word_embeddings"):
        assert field in cfg, f"{key} lacks {field}"
    assert cfg["hidden_size"] % cfg["num_attention_heads"] == 0
    assert cfg.get("head_dim", hw.head_dim(cfg)) == cfg["hidden_size"] // cfg["num_attention_heads"]


def test_configs_are_fresh_copies():
    hw.load_model("llama-2-7b")["hidden_size"] = 1
    assert hw.load_model("llama-2-7b")["hidden_size"] == 4096


def test_accelerator_specs_are_dense_bf16_with_sources():
    accs = hw.load_accelerators()
    assert set(accs) == {"A100", "H100", "H200"}
    for key, acc in accs.items():
        assert "datasheet" in acc["source"] and key in acc["source"]
        assert 1e14 < acc["peak_flops"] < 1.5e15 and 1e12 < acc["bandwidth"] < 1e13
    assert accs["A100"]["peak_flops"] == 312e12 and accs["H100"]["bandwidth"] == 3.35e12
    assert accs["H200"]["bandwidth"] == 4.8e12


def test_pooled_cards_scale_peak_and_bandwidth_not_the_ridge():
    one, four = hw.accelerator("H100"), hw.accelerator("H100", cards=4)
    assert four["peak_flops"] == 4 * one["peak_flops"] and four["bandwidth"] == 4 * one["bandwidth"]
    assert hw.ridge_flops_per_byte(four) == pytest.approx(hw.ridge_flops_per_byte(one))
    assert hw.load_accelerators()["H100"]["peak_flops"] == one["peak_flops"]  # the stored spec is unchanged


# --- counting --------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(PARAMS))
def test_parameter_counts_match_the_published_totals(key):
    assert hw.param_count(hw.load_model(key)) == PARAMS[key]


def test_llama2_7b_bytes_exact_and_as_the_seed_rounds_them(cfg7):
    assert hw.weight_bytes(cfg7) == 13_476_831_232
    assert hw.weight_bytes(cfg7, bytes_per_param=1) == 6_738_415_616
    assert round(hw.weight_bytes(cfg7) / 2**30, 2) == 12.55
    assert round(6.74e9 * 2) == 13_480_000_000 and round(13.48e9 / 2**30, 2) == 12.55


def test_tied_head_is_stored_once_but_still_computed():
    cfg1 = hw.load_model("llama-3.2-1b")
    untied = dict(cfg1, tie_word_embeddings=False)
    extra = cfg1["vocab_size"] * cfg1["hidden_size"]
    assert hw.param_count(untied) - hw.param_count(cfg1) == extra
    assert hw.forward_macs(untied, 1, 0) == hw.forward_macs(cfg1, 1, 0)


def test_second_seed_sizes(deployment):
    target, draft, _ = deployment
    assert round(hw.weight_bytes(target) / 1e9) == 141          # "about 140 GB"
    assert round(hw.weight_bytes(draft) / 1e9, 1) == 2.5         # "about 2.5 GB"


def test_seed_mac_count_reproduced_and_what_it_leaves_out(cfg7):
    assert hw.seed_macs(cfg7, 1, 512) == 5_167_382_528
    d, f, L, V = 4096, 11008, 32, 32000
    assert hw.forward_macs(cfg7, 1, 512) - hw.seed_macs(cfg7, 1, 512) == L * d * f + d * V
    assert hw.forward_macs(cfg7, 1, 512) == 6_741_295_104


def test_both_intensity_tables(cfg7):
    ns = (1, 2, 4, 8, 16)
    seed = [round(hw.seed_macs(cfg7, n, 512) / 13.48e9, 2) for n in ns]   # the walk-through's MACs per byte
    assert seed == [0.38, 0.77, 1.53, 3.07, 6.13]
    full = [round(hw.intensity(cfg7, n, 512), 2) for n in ns]              # FLOPs per byte, the notebook's one unit
    assert full == [1.00, 2.00, 4.00, 8.00, 16.01]
    assert hw.intensity(cfg7, 1, 512) == 2 * 6_741_295_104 / 13_476_831_232


def test_forward_macs_is_linear_in_tokens_and_context(cfg7):
    assert hw.forward_macs(cfg7, 0, 512) == 0
    assert hw.forward_macs(cfg7, 5, 100) == 5 * hw.forward_macs(cfg7, 1, 100)
    per_ctx = hw.forward_macs(cfg7, 1, 1) - hw.forward_macs(cfg7, 1, 0)
    assert per_ctx == 32 * 2 * 4096


def test_kv_cache_bytes_uses_grouped_query_width():
    t = hw.load_model("llama-3-70b")
    assert hw.kv_cache_bytes(t, 1) == 2 * 80 * 1024 * 2 == 320 * 1024  # 327,680 bytes = 320 KiB per position
    assert hw.kv_cache_bytes(hw.load_model("llama-3.2-1b"), 1) == 2 * 16 * 8 * 64 * 2 == 32 * 1024
    assert hw.kv_cache_bytes(hw.load_model("llama-2-7b"), 1) == 2 * 32 * 4096 * 2


# --- ridges and step times -------------------------------------------------------------


def test_ridges_are_flops_per_byte_and_decode_misses_by_150_to_300x(cfg7):
    ridges = {k: hw.ridge_flops_per_byte(a) for k, a in hw.load_accelerators().items()}
    assert {k: round(r) for k, r in ridges.items()} == {"A100": 153, "H100": 295, "H200": 206}
    assert all(100 <= r <= 300 for r in ridges.values())             # the seed's range, in FLOPs
    assert all(75 <= r / 2 <= 150 for r in ridges.values())          # in MACs per byte
    one_token = hw.intensity(cfg7, 1, 512)
    misses = [r / one_token for r in ridges.values()]
    assert 150 < min(misses) and max(misses) < 300


def test_deployment_step_times_and_speedup(deployment):
    target, draft, four = deployment
    plain, d, verify = hw.round_times(target, draft, four, 4, 0)
    assert plain == pytest.approx(141_107_412_992 / 13.4e12)
    assert verify == plain                                           # memory-bound: same bytes
    assert d == pytest.approx(2_471_628_800 / 13.4e12)
    assert expected_tokens(0.8, 4) == pytest.approx(3.3616)
    assert hw.speculative_speedup(target, draft, four, 0.8, 4, 0) == pytest.approx(3.3616 * plain / (4 * d + plain))
    assert round(hw.speculative_speedup(target, draft, four, 0.8, 4, 0), 2) == 3.14


def test_a_realistic_draft_step_uses_the_course_overhead(deployment):
    """The same draft-cost model as notebook 06: c = (bytes time + overhead) / target step."""
    target, draft, four = deployment
    ov = DRAFT_STEP_OVERHEAD_S
    plain, d, verify = hw.round_times(target, draft, four, 4, 0, overhead=ov)
    assert d == pytest.approx(2_471_628_800 / 13.4e12 + ov)
    c = draft_cost(2_471_628_800 / 13.4e12, plain, ov)
    s = hw.speculative_speedup(target, draft, four, 0.8, 4, 0, overhead=ov)
    assert s == pytest.approx(3.3616 / (4 * c + 1)) and round(s, 2) == 2.45
    assert 0.9e-3 < d < 1.1e-3                                       # "about 1 ms" per draft step


def test_step_time_adds_the_weight_matmuls_and_attention_each_on_its_roofline(deployment):
    target, _, four = deployment
    big = hw.step_time(target, four, 5, 0, batch=512)
    assert big == pytest.approx(2 * 512 * hw.forward_macs(target, 5, 0) / four["peak_flops"])
    kv = hw.step_time(target, four, 1, 4096, batch=16)
    assert kv == pytest.approx((hw.weight_bytes(target) + 16 * hw.kv_cache_bytes(target, 4096)) / four["bandwidth"])
    # 238 sequences x 5 tokens at 2,048: matmuls compute-bound, attention memory-bound, added
    mm, att = hw.kernel_times(target, four, 5, 2048, 238)
    assert mm == pytest.approx(2 * 238 * hw.forward_macs(target, 5, 0) / four["peak_flops"])
    assert att == pytest.approx(238 * hw.kv_cache_bytes(target, 2048) / four["bandwidth"])
    assert hw.step_time(target, four, 5, 2048, 238) == pytest.approx(mm + att)
    assert round(1e3 * mm, 2) == 41.81 and round(1e3 * att, 2) == 11.92
    assert round(1e3 * hw.one_max_step_time(target, four, 5, 2048, 238), 2) == 43.43      # the cache hides the matmuls
    # attention's own arithmetic: 8 FLOPs per cache byte per position for Llama-3-70B, compute-bound from ~37 positions
    assert 2 * hw.attention_macs(target, 1, 1) / hw.kv_cache_bytes(target, 1) == 8.0
    assert round(hw.attention_crossover_tokens(target, four), 1) == 36.9
    assert hw.attention_time(target, four, 64, 2048, 8) == pytest.approx(
        2 * 8 * hw.attention_macs(target, 64, 2048) / four["peak_flops"])
    assert hw.attention_macs(target, 3, 100) == hw.forward_macs(target, 3, 100) - hw.forward_macs(target, 3, 0)
    # vectorised over batches, as the widget uses it
    bs = np.array([1, 60, 238, 1000])
    for n, ctx in ((1, 0), (5, 2048), (64, 512)):
        assert np.allclose(hw.step_times(target, four, n, ctx, bs), [hw.step_time(target, four, n, ctx, b) for b in bs])


def test_capacity_counts_both_models_weights_and_caches(deployment):
    target, draft, four = deployment
    assert four["memory"] == 320e9
    per = hw.kv_cache_bytes(target, 4096) + hw.kv_cache_bytes(draft, 4096)
    assert hw.deployment_bytes(target, draft, 0, 4096) == 141_107_412_992 + 2_471_628_800
    assert hw.deployment_bytes(target, draft, 512, 4096) == pytest.approx(899.49e9, rel=1e-5)  # the "about 900 GB"
    assert hw.max_batch(target, draft, four, 4096) == 119
    assert hw.deployment_bytes(target, draft, 119, 4096) <= 320e9 < hw.deployment_bytes(target, draft, 120, 4096)
    assert (320e9 - hw.deployment_bytes(target, draft, 0, 4096)) // per == 119
    assert [hw.max_batch(target, draft, four, c) for c in hw.CONTEXTS] == [955, 477, 238, 119, 59, 29]
    assert hw.max_batch(target, draft, four, 0) == math.inf
    assert hw.max_batch(target, draft, dict(four, memory=100e9), 1024) == 0
    assert round(hw.speculative_speedup(target, draft, four, 0.8, 4, 4096, 119), 2) == 1.97      # ideal draft
    assert round(hw.speculative_speedup(target, draft, four, 0.8, 4, 4096, 119, overhead=DRAFT_STEP_OVERHEAD_S), 2) == 1.82


def test_crossover_batch_is_the_weight_matmuls_and_ignores_the_context(deployment):
    target, _, four = deployment
    b5, b1 = hw.crossover_batch(target, four, 5), hw.crossover_batch(target, four, 1)
    assert b5 == pytest.approx(59.9385, rel=1e-5) and b1 == pytest.approx(5 * b5)
    assert hw.weight_bytes(target) / four["bandwidth"] == pytest.approx(2 * b5 * hw.forward_macs(target, 5, 0) / four["peak_flops"])
    for ctx in (0, 1024, 4096):   # the matmuls cross where they cross, whatever the cache
        assert hw.matmul_time(target, four, 5, b5 * 0.999) == pytest.approx(hw.weight_bytes(target) / four["bandwidth"])
        assert hw.kernel_times(target, four, 5, ctx, b5 * 1.01)[0] > hw.weight_bytes(target) / four["bandwidth"]
    assert hw.crossover_batch(target, four, 0) == math.inf


def test_speculation_turns_slower_past_a_batch_that_fits(deployment):
    """The break-it's measured numbers: the explainer's price (no KV cache) against the honest one."""
    target, draft, four = deployment
    ov = DRAFT_STEP_OVERHEAD_S
    b = hw.slower_batch(hw.step_time, target, draft, four, 0.8, 4, 1024, ov)
    assert b == 249 and b <= hw.max_batch(target, draft, four, 1024) == 477
    assert hw.speculative_speedup(target, draft, four, 0.8, 4, 1024, b, overhead=ov) < 1
    assert hw.speculative_speedup(target, draft, four, 0.8, 4, 1024, b - 1, overhead=ov) >= 1
    assert hw.slower_batch(hw.step_time, target, draft, four, 0.8, 4, 1024, 0.0) == 274
    assert hw.slower_batch(hw.one_max_step_time, target, draft, four, 0.8, 4, 1024, ov) == 300   # the old price
    assert hw.slower_batch(hw.explainer_step_time, target, draft, four, 0.8, 4, 2048, ov) == 180
    assert hw.slower_batch(hw.step_time, target, draft, four, 0.8, 4, 2048, ov) is None
    assert round(hw.speculative_speedup(target, draft, four, 0.8, 4, 2048, 238, overhead=ov), 2) == 1.21
    assert round(hw.speculative_speedup(target, draft, four, 0.8, 4, 2048, 238, step=hw.one_max_step_time,
                                        overhead=ov), 2) == 1.45                              # the old price
    assert round(hw.speculative_speedup(target, draft, four, 0.8, 4, 4096, 119, step=hw.one_max_step_time,
                                        overhead=ov), 2) == 2.42
    assert hw.slower_batch(hw.step_time, target, draft, four, 0.8, 4, 4096, ov) is None
    assert hw.slower_batch(hw.step_time, target, draft, four, 0.0, 4, 1024, ov) == 1


def test_slower_batch_stops_at_the_memory_and_a_full_memory_fits(deployment):
    target, draft, four = deployment
    need = hw.deployment_bytes(target, draft, 249, 1024)
    ov = DRAFT_STEP_OVERHEAD_S
    assert hw.slower_batch(hw.step_time, target, draft, dict(four, memory=need), 0.8, 4, 1024, ov) == 249
    assert hw.slower_batch(hw.step_time, target, draft, dict(four, memory=need - 1), 0.8, 4, 1024, ov) is None


def test_explainer_price_is_the_step_time_of_an_empty_context(deployment):
    target, _, four = deployment
    for n, ctx, b in [(1, 4096, 16), (5, 1024, 400), (1, 0, 1)]:
        assert hw.explainer_step_time(target, four, n, ctx, b) == hw.step_time(target, four, n, 0, b)
    assert hw.explainer_step_time(target, four, 1, 4096, 16) < hw.step_time(target, four, 1, 4096, 16)


def test_the_deployment_widget_numbers_agree_with_the_scalar_functions(deployment):
    target, draft, four = deployment
    r = serving.deployment("H100", context=1024, batch=100, overhead_ms=0.8)
    assert r["plain_ms"] == pytest.approx(1e3 * hw.step_time(target, four, 1, 1024, 100))
    assert r["verify_ms"] == pytest.approx(1e3 * hw.step_time(target, four, 5, 1024, 100))
    assert r["speedup"] == pytest.approx(hw.speculative_speedup(target, draft, four, 0.8, 4, 1024, 100, overhead=0.8e-3))
    assert r["slower_batch"] == 249 and r["max_batch"] == 477 and r["fits"]
    for ctx in hw.CONTEXTS:
        for ov in (0.0, 0.8):
            got = serving.deployment("H100", context=ctx, overhead_ms=ov)["slower_batch"]
            assert got == hw.slower_batch(hw.step_time, target, draft, four, 0.8, 4, ctx, ov * 1e-3), (ctx, ov)
    big = serving.deployment("H100", context=4096, batch=512)
    assert not big["fits"] and big["speedup"] is None and big["max_batch"] == 119 and round(big["memory_gb"]) == 899


@pytest.mark.parametrize("a,k", [(0.8, 4), (0.0, 3), (1.0, 2), (0.5, 8)])
def test_rounds_with_accuracy_reaches_exactly_n(a, k):
    """07's timeline: speculative.rounds_with_accuracy (one copy; hardware once had its own) emits exactly n."""
    rounds = rounds_with_accuracy(a, k, 48, np.random.default_rng(0))
    assert sum(rounds) == 48 and all(1 <= r <= k + 1 for r in rounds)
    if a == 1.0:
        assert rounds[:-1] == [k + 1] * (len(rounds) - 1)


def test_data_files_are_valid_json():
    for path in list((hw.DATA / "models").glob("*.json")) + [hw.DATA / "accelerators.json"]:
        json.loads(path.read_text())


# --- 07's break-it: each deployment at its own best ------------------------------------------------


def _gains_over_contexts(kind, acc, a, k, overhead, contexts):
    """best_gain at every context, vectorised over the batches (the reference loops; this is its check)."""
    T, D = hw.load_model("llama-3-70b"), hw.load_model("llama-3.2-1b")
    out = []
    for ctx in contexts:
        def step(cfg, n, B):
            mm = np.maximum(hw.weight_bytes(cfg) / acc["bandwidth"], 2 * B * hw.forward_macs(cfg, n, 0) / acc["peak_flops"])
            if kind == "explainer":
                return mm
            return mm + B * max(hw.kv_cache_bytes(cfg, ctx) / acc["bandwidth"],
                                2 * hw.attention_macs(cfg, n, ctx) / acc["peak_flops"])
        bp = np.arange(1, hw.plain_max_batch(T, acc, ctx) + 1, dtype=float)
        bs = np.arange(1, hw.max_batch(T, D, acc, ctx) + 1, dtype=float)
        plain = (bp / step(T, 1, bp)).max()
        spec = (bs * expected_tokens(a, k) / (k * (step(D, 1, bs) + overhead) + step(T, k + 1, bs))).max()
        out.append(spec / plain)
    return np.array(out)


def test_plain_decoding_fits_more_sequences_than_speculation():
    T, D, four = hw.load_model("llama-3-70b"), hw.load_model("llama-3.2-1b"), hw.accelerator("H100", cards=4)
    assert [hw.plain_max_batch(T, four, c) for c in (1024, 2048, 4096)] == [533, 266, 133]
    assert [hw.max_batch(T, D, four, c) for c in (1024, 2048, 4096)] == [477, 238, 119]


def test_best_gain_sets_each_deployment_at_its_own_best():
    T, D, four = hw.load_model("llama-3-70b"), hw.load_model("llama-3.2-1b"), hw.accelerator("H100", cards=4)
    got = [hw.best_gain(hw.step_time, T, D, four, 0.8, 4, c, DRAFT_STEP_OVERHEAD_S) for c in (1024, 2048, 4096)]
    assert np.allclose(got, [0.9197233161315326, 1.148986918326707, 1.7273793223854406], rtol=1e-12)
    assert np.allclose(got, _gains_over_contexts("honest", four, 0.8, 4, DRAFT_STEP_OVERHEAD_S, (1024, 2048, 4096)))
    assert hw.best_gain(hw.explainer_step_time, T, D, four, 0.8, 4, 2048, DRAFT_STEP_OVERHEAD_S) < 0.7


@pytest.mark.parametrize("kind,want", [("honest", 1451), ("explainer", 3085)])
def test_flip_context_is_where_a_full_scan_first_wins(kind, want):
    T, D, four = hw.load_model("llama-3-70b"), hw.load_model("llama-3.2-1b"), hw.accelerator("H100", cards=4)
    contexts = np.arange(256, 16385)
    wins = _gains_over_contexts(kind, four, 0.8, 4, DRAFT_STEP_OVERHEAD_S, contexts) > 1
    assert np.count_nonzero(wins[1:] != wins[:-1]) == 1, "the gain crosses 1 once: bisection is sound here"
    assert contexts[np.argmax(wins)] == want
    step = hw.step_time if kind == "honest" else hw.explainer_step_time
    assert hw.flip_context(step, T, D, four, 0.8, 4, DRAFT_STEP_OVERHEAD_S) == want
