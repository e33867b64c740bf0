"""speclab.transformer and speclab.realspec: notebook 10's trained models, their NumPy forward with a
KV cache, and speculative decoding on them.

Depends on: data/models/tiny_*.npz and tiny_models.json (built by data/models/make_models.py),
speclab.transformer, speclab.realspec, speclab.speculative.
"""
import numpy as np
import pytest

from speclab import ScriptedRNG, realspec, sample_from
from speclab import transformer as tf
from speclab.speculative import accept_prob, residual

PROMPT = tf.encode("def parse_args(self, args=None, namespace=None):\n    ")


@pytest.fixture(scope="module")
def models():
    return tf.load("target"), tf.load("draft")


# --- the shipped files ------------------------------------------------------------------------

def test_weights_are_fp16_and_small():
    total = 0
    for name in ("target", "draft"):
        path = tf.MODELS / f"tiny_{name}.npz"
        total += path.stat().st_size
        with np.load(path) as z:
            assert all(z[k].dtype == np.float16 for k in z.files), f"{name}: every weight is stored as fp16"
    assert total <= 20 * 2 ** 20, f"the models take {total / 2 ** 20:.1f} MiB; the budget is 20"


def test_record_says_how_they_were_made():
    info = tf.info()
    for name in ("target", "draft"):
        m = info["models"][name]
        for key in ("seed", "steps", "train_seconds", "curve", "n_layer", "d", "n_head"):
            assert key in m, f"tiny_models.json: {name} lacks {key}"
        assert m["curve"][-1]["step"] == m["steps"]
    assert info["models"]["target"]["exit_layer"] == 1 and info["corpus"]["sha256"]


# --- the forward ---------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["target@1", "target@4", "draft@1"])
def test_numpy_forward_reproduces_pytorch(key):
    """The course's forward against the logits PyTorch computed from the same fp16-rounded weights."""
    ref = tf.reference_logits()
    name, layer = key.split("@")
    model = tf.load(name).exit_at(int(layer))
    got = model.forward(ref["prompt"], model.new_cache())
    assert got.shape == ref[key].shape
    assert np.abs(got - ref[key]).max() < 1e-3, np.abs(got - ref[key]).max()
    assert (got.argmax(1) == ref[key].argmax(1)).mean() > 0.98


def test_cache_one_pass_equals_token_by_token(models):
    target, _ = models
    whole = target.forward(PROMPT, target.new_cache())
    cache = target.new_cache()
    rows = [target.forward(PROMPT[:7], cache)] + [target.forward([t], cache) for t in PROMPT[7:]]
    assert cache.length == len(PROMPT)
    np.testing.assert_allclose(np.concatenate(rows), whole, atol=1e-4)


def test_truncate_then_forward_forgets_the_tail(models):
    target, _ = models
    cache = target.new_cache()
    target.forward(PROMPT, cache)
    cache.truncate(10)
    again = target.forward([ord("x"), ord("y")], cache)
    fresh = target.forward(PROMPT[:10] + [ord("x"), ord("y")], target.new_cache())[-2:]
    np.testing.assert_allclose(again, fresh, atol=1e-4)
    with pytest.raises(ValueError):
        cache.truncate(cache.length + 1)
    with pytest.raises(ValueError):
        target.forward([65] * (tf.CONTEXT + 1 - cache.length), cache)


def test_probs_are_float64_distributions(models):
    p = models[1].probs(PROMPT, models[1].new_cache())
    assert p.dtype == np.float64 and np.allclose(p.sum(1), 1.0)


def test_early_exit_is_the_first_layers(models):
    target, _ = models
    early = target.exit_at(1)
    assert early.n_layer == 1 and early.w is target.w
    assert early.weight_bytes() < target.weight_bytes() / 2


# --- speculative decoding on the models -----------------------------------------------------------

def test_verify_block_equals_single_forwards(models):
    target, draft = models
    drafted = tf.encode("self):")
    cache = target.new_cache()
    target.forward(PROMPT[:-1], cache)
    p = realspec.verify_block(target, cache, PROMPT[-1:], drafted)
    assert p.shape == (len(drafted) + 1, tf.V) and cache.length == len(PROMPT) + len(drafted)
    one = target.new_cache()
    rows = [target.probs(PROMPT, one)[-1]] + [target.probs([x], one)[0] for x in drafted]
    np.testing.assert_allclose(p, np.array(rows), atol=1e-6)


def test_round_follows_the_contract(models):
    """A scripted round, token by token: drafts from the draft's q, the tests in order, then the
    residual or the bonus; both caches hold the accepted text afterwards."""
    target, draft = models
    rng = np.random.default_rng(5)
    for trial in range(20):
        k = 1 + trial % 5
        us = rng.random(2 * k + 2).tolist()
        run = realspec.Run([])
        out = realspec.speculative_generate(target, draft, PROMPT, 1, k, ScriptedRNG(us), run)
        # replay by hand
        dc = draft.new_cache()
        drafted, q = realspec.draft_block(draft, dc, PROMPT, k, ScriptedRNG(us[:k]))
        p = realspec.verify_block(target, target.new_cache(), PROMPT, drafted)
        j, want = k, None
        for i, x in enumerate(drafted):
            if us[j] < accept_prob(p[i], q[i], x):
                j += 1
                continue
            want = drafted[:i] + [sample_from(residual(p[i], q[i]), us[j + 1])]
            break
        else:
            want = drafted + [sample_from(p[k], us[j])]
        assert out == want[:1] and run.kept[0] == len(want) - 1


def test_first_token_is_the_targets_exactly(models):
    """The 03 argument on the real models: accepted mass plus rejected mass times the residual is p."""
    target, draft = models
    p = target.probs(PROMPT, target.new_cache())[-1]
    q = draft.probs(PROMPT, draft.new_cache())[-1]
    keep = np.minimum(p, q)
    emitted = keep + (1 - keep.sum()) * residual(p, q)
    assert np.abs(emitted - p).max() < 1e-12


def test_draft_equal_to_target_keeps_everything(models):
    target, _ = models
    run = realspec.Run([])
    realspec.speculative_generate(target, target, PROMPT, 40, 4, np.random.default_rng(0), run)
    # p and q differ only by float32 regrouping (one forward over 5 tokens against five over one)
    assert run.tokens_per_call > 4.9


def test_caches_stay_consistent_over_a_run(models):
    """A run with rolled-back caches emits what a run that rebuilds both caches every round emits
    (the same uniforms; the numbers differ only by float32 regrouping, far below these margins)."""
    target, draft = models
    for seed in range(3):
        got = realspec.speculative_generate(target, draft, PROMPT, 40, 3, np.random.default_rng(seed))
        rng, context = np.random.default_rng(seed), list(PROMPT)
        while len(context) < len(PROMPT) + 40:
            drafted, q = realspec.draft_block(draft, draft.new_cache(), context, 3, rng)
            p = realspec.verify_block(target, target.new_cache(), context, drafted)   # all fresh
            context += realspec.verify_drafts(drafted, realspec.BlockRows(p, q), rng)[0]
        assert got == context[len(PROMPT):len(PROMPT) + 40]


def test_stale_cache_changes_the_distribution(models):
    target, _ = models
    assert 0 < realspec.stale_cache_tv(target, PROMPT, tf.encode("zq")) < 1
    assert realspec.stale_cache_tv(target, PROMPT, []) == 0.0


def test_stale_decoder_differs_only_after_a_rejection(models):
    target, draft = models
    for seed in range(4):
        run = realspec.Run([])
        good = realspec.speculative_generate(target, draft, PROMPT, 40, 4, np.random.default_rng(seed), run)
        bad = realspec.speculative_generate(target, draft, PROMPT, 40, 4, np.random.default_rng(seed), stale=True)
        first_round = run.kept[0] + 1
        assert bad[:first_round] == good[:first_round]


def test_acceptance_and_cross_entropy(models):
    target, draft = models
    text = tf.encode((tf.MODELS.parent / "corpora" / "code_stdlib.txt").read_text()[:600])
    a = realspec.acceptance_by_position(target, draft, text)
    assert a.shape == (len(text),) and 0 < a.min() and a.max() <= 1 + 1e-12
    assert realspec.cross_entropy(target, text) < realspec.cross_entropy(draft, text) + 0.5


def test_adaptive_drafter_uses_one_uniform_per_draft(models):
    target, draft = models
    drafter = realspec.confident_block(6, 0.5)
    rng = ScriptedRNG([0.5] * 6)
    drafted, q = drafter(draft, draft.new_cache(), PROMPT, rng)
    assert 1 <= len(drafted) <= 6 and rng.calls == len(drafted) and q.shape == (len(drafted), tf.V)


def test_confident_draft_stops_right_after_an_unsure_token(models):
    target, draft = models
    us = np.random.default_rng(3).random(8).tolist()
    cache = draft.new_cache()
    assert realspec.confident_draft(draft, cache, PROMPT, 8, 0.0, ScriptedRNG(us))[0] == \
        realspec.draft_block(draft, draft.new_cache(), PROMPT, 8, ScriptedRNG(us))[0], "threshold 0 is a fixed k"
    assert cache.length == len(PROMPT) + 7
    for threshold in (0.3, 0.6, 0.9):
        cache = draft.new_cache()
        drafted, q = realspec.confident_draft(draft, cache, PROMPT, 8, threshold, ScriptedRNG(us))
        sure = [q[i][x] >= threshold for i, x in enumerate(drafted)]
        assert all(sure[:-1]) and (len(drafted) == 8 or not sure[-1]), "stop right after the first unsure token"
        assert cache.length == len(PROMPT) + len(drafted) - 1
    flat = np.array([0.25, 0.25, 0.5])

    class Flat:
        def probs(self, tokens, cache):
            cache.length += len(tokens)
            return np.tile(flat, (len(tokens), 1))
    cache = tf.Cache(1, 1, 1)
    assert realspec.confident_draft(Flat(), cache, [0], 3, 0.25, ScriptedRNG([0.1] * 3))[0] == [0, 0, 0], \
        "q[x] equal to the threshold does not stop"


def test_generation_times_threshold_zero_is_fixed_k(models):
    target, draft = models
    gen = realspec.generation_times(target, {"fixed": (draft, 3), "adaptive": (draft, realspec.confident_block(3, 0.0))},
                                    PROMPT, 12, repeat=2)
    assert [len(gen[label]) for label in gen] == [2, 2, 2]
    for fixed, adaptive, plain in zip(gen["fixed"], gen["adaptive"], gen["plain"]):
        assert fixed.run.tokens == adaptive.run.tokens and len(fixed.run.tokens) == 12
        assert fixed.run.drafted == adaptive.run.drafted == [3] * fixed.run.rounds
        assert fixed.target_calls == fixed.run.rounds and plain.target_calls == 12 and plain.draft_seconds == 0
        assert 0 < fixed.target_seconds + fixed.draft_seconds <= fixed.seconds + 1e-3
    assert len(realspec.speedups(gen, "fixed")) == 2


def test_timed_model_gives_the_same_rows(models):
    target, _ = models
    timed = realspec.Timed(target)
    assert np.array_equal(timed.probs(PROMPT, timed.new_cache()), target.probs(PROMPT, target.new_cache()))
    assert timed.positions == len(PROMPT) and timed.calls == 1 and timed.forward_seconds >= 0


def test_spread_and_forward_times(models):
    assert realspec.spread([1, 2, 3, 4, 5]) == (3.0, 2.0, 4.0)
    got = realspec.forward_times({"draft": models[1]}, [1, 3], repeat=3)
    assert set(got) == {("draft", 1), ("draft", 3)} and all(len(v) == 3 and (v > 0).all() for v in got.values())


def test_a_coarse_cpu_clock_gives_a_time_per_call_not_zero(monkeypatch):
    """A clock that ticks every 10 ms reads 0 for a 1 ms call; the measurement calls again until it moves."""
    import time
    fine = time.process_time
    monkeypatch.setattr(realspec.time, "process_time", lambda: 0.01 * (fine() // 0.01))
    calls = []
    per_call = realspec.cpu_time_per_call(lambda: (calls.append(1), sum(range(20000))))
    assert per_call > 0 and len(calls) >= 1


def test_hollow_model_runs_the_same_code_path(models):
    target, _ = models
    hollow = tf.hollow(target)
    assert hollow.n_layer == target.n_layer and hollow.d == target.n_head
    assert hollow.forward(PROMPT, hollow.new_cache()).shape == (len(PROMPT), tf.V)


def test_damage_is_float_rounding_for_the_correct_loop_and_starts_at_the_first_rejection(models):
    """damage_by_position on the course's loops: the correct one scores float32 rounding everywhere; the
    stale one scores exactly that until the first token decided after a rejection (junk_in_cache > 0),
    and there equals stale_cache_tv of the first rejection."""
    target, draft = models
    short, n, k = tf.encode("def "), 24, 4
    stale_loop = lambda *a: realspec.speculative_generate(*a, stale=True)   # noqa: E731
    for seed in range(3):
        good, kept_good = realspec.damage_by_position(realspec.speculative_generate, target, draft, short, n, k, seed)
        assert good.shape == (n,) and np.nanmax(good) < 1e-5 and not np.isnan(good).any()
        bad, kept = realspec.damage_by_position(stale_loop, target, draft, short, n, k, seed)
        junk = np.array(realspec.junk_in_cache(kept, k)[:n])
        assert np.all(bad[junk == 0] < 1e-5) and (junk > 0).any() and bad[junk > 0].max() > 1e-3
        run = realspec.Run([])
        realspec.speculative_generate(target, draft, short, n, k, np.random.default_rng(seed), run)
        context, rejected = realspec.stale_positions(run)[0]
        first = len(context) - len(short)
        assert junk[first] > 0 and junk[first - 1] == 0
        assert abs(bad[first] - realspec.stale_cache_tv(target, context, rejected)) < 1e-5


def test_junk_in_cache_counts_the_earlier_rounds_rejections():
    assert realspec.junk_in_cache([4, 4], 4) == [0] * 10
    assert realspec.junk_in_cache([1, 4, 0], 4) == [0, 0] + [3] * 5 + [3]
    assert realspec.junk_in_cache([0, 0], 1) == [0, 1]


def test_held_out_code_is_code():
    code = tf.decode(realspec.held_out("code", 4000))
    lines = code.splitlines()
    assert '"""' not in code and "\'\'\'" not in code
    assert not any(line.strip().startswith("#") or not line.strip() for line in lines)
    assert sum(line.startswith(" ") for line in lines) > 0.8 * len(lines), "mostly indented code lines"
    assert realspec.code_lines('x = 1\n"""doc\nstill doc\n"""\n# c\ny = 2\n') == "x = 1\ny = 2\n"
    assert len(realspec.held_out("prose", 100)) == 100


def test_kneser_ney_is_a_distribution_and_prefers_what_it_saw():
    text = tf.encode("the cat sat on the mat. the cat ate. " * 20 + "a dog!")
    for order in (1, 2, 3, 5):
        kn = realspec.KneserNey(text, order)
        for context in ("the c", "zzzzz", "at. t", "g!"):
            ctx = tf.encode(context)
            total = sum(kn.next_probs(ctx + [x])[-1] for x in range(tf.V))
            assert abs(total - 1) < 1e-9, (order, context, total)
    kn = realspec.KneserNey(text, 3)
    seen, unseen = tf.encode("the cat"), tf.encode("the caz")
    assert kn.next_probs(seen)[-1] > 0.5 > kn.next_probs(unseen)[-1] > 0
    assert kn.cross_entropy(seen, first=3) < kn.cross_entropy(unseen, first=3)


def test_cross_entropy_keeps_context_in_view(models):
    """Every scored character has at least `keep` characters before it in view: the first `keep` are not
    scored, and the windows overlap by `keep` (a fresh window would score its first characters blind)."""
    target, _ = models
    text = realspec.held_out("code", 120)                       # one window: the exact value is easy
    p = realspec.teacher_forced(target, text)
    want = float(-np.log(p[np.arange(63, 119), text[64:]]).mean())
    assert abs(realspec.cross_entropy(target, text, keep=64) - want) < 1e-6   # float32 regrouping only
    long = realspec.held_out("code", 400)                       # several windows: each character once
    rows = []
    for s in range(64, 399, 64):
        q = target.probs(long[s - 64:min(s + 64, 399)], target.new_cache())[63:]
        rows.append(-np.log(q[np.arange(len(q)), long[s:s + len(q)]]))
    assert abs(realspec.cross_entropy(target, long, keep=64) - np.concatenate(rows).mean()) < 1e-6


# --- float32 end to end -------------------------------------------------------------------------

class _Traced(np.ndarray):
    """A weight that reports every NumPy operation it (or anything computed from it) takes part in:
    the dtypes going in and out, and every astype. Activations computed from a weight stay _Traced."""
    seen = []

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [x.view(np.ndarray) if isinstance(x, _Traced) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(x.view(np.ndarray) if isinstance(x, _Traced) else x for x in kwargs["out"])
        result = getattr(ufunc, method)(*plain, **kwargs)
        arrays = [x for x in plain if isinstance(x, np.ndarray)]
        _Traced.seen.append((ufunc.__name__, [x.dtype for x in arrays], getattr(result, "dtype", None)))
        return result.view(_Traced) if isinstance(result, np.ndarray) else result

    def astype(self, dtype, *args, **kwargs):
        _Traced.seen.append(("astype", [self.dtype], np.dtype(dtype)))
        return super().astype(dtype, *args, **kwargs)


def _traced(model):
    return tf.Transformer({k: v.view(_Traced) for k, v in model.w.items()}, model.n_layer, model.n_head,
                          model.d, model.name)


@pytest.mark.parametrize("name", ["target", "draft"])
def test_forward_is_float32_end_to_end(name):
    """Every weight is float32 in memory (converted from fp16 once, at load); every operation of the
    forward, prefill and one-token steps, takes float32 in and gives float32 out, and no weight is
    converted during a forward. A float64 scalar (np.sqrt of an int, say) silently promotes every
    activation after it to float64, which doubles the bytes moved and converts each weight it meets."""
    model = tf.load(name)
    assert all(type(v) is np.ndarray and v.dtype == np.float32 for v in model.w.values()), \
        "weights are held as float32 arrays"
    traced = _traced(model)
    cache = traced.new_cache()
    _Traced.seen.clear()
    out = [traced.forward(PROMPT[:9], cache), traced.forward(PROMPT[9:10], cache), traced.forward(PROMPT[10:13], cache)]
    assert _Traced.seen, "the trace saw the forward's operations"
    bad = [op for op in _Traced.seen if op[0] == "astype" or any(d != np.float32 for d in op[1]) or op[2] != np.float32]
    assert not bad, f"operations of the forward that are not float32 in and out: {bad[:5]}"
    assert all(o.dtype == np.float32 for o in out) and cache.k.dtype == cache.v.dtype == np.float32


def test_a_float64_forward_fails_the_trace(models):
    """The trace itself can fail: a forward whose attention scale is a float64 scalar is caught."""
    target, _ = models
    traced = _traced(target)
    _Traced.seen.clear()
    x = traced.w["h0.qkv.w"][:4, :4] * np.float64(0.5)
    assert any(op[2] == np.float64 for op in _Traced.seen) and x.dtype == np.float64
