"""speclab.models.smollm: SmolLM2-135M-Instruct in NumPy (issue 43 item 1).

Fast tests run the same forward on a tiny random Llama (speclab.models.tinyllama: milliseconds); the tokenizer tests read
the float32 cache's vocabulary (make setup builds it). The tests marked slow load the real model.
Known token ids and the greedy answer come from other SmolLM2 ports that print what `transformers`
computes for the same prompts; this code reproduces them.

Depends on: speclab.models.smollm, data/smollm2-135m/ (python -m speclab.models.smollm.cache), data/corpora/baker.txt.
"""
from dataclasses import replace

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from speclab.models import tinyllama
from speclab.plumbing.datafiles import DATA
from speclab.models.smollm import Config, Model, Tokenizer, cache, load_model, load_tokenizer
from speclab.models.smollm.model import apply
from speclab.models.smollm.tokenizer import PIECE

# speclab.models.tinyllama's stand-in, with a vocabulary large enough for the toy GGUF's tokens (write_tiny_gguf)
TINY = replace(tinyllama.TINY, vocab=61)


@pytest.fixture(scope="module")
def tiny():
    return tinyllama.tiny(seed=0, cfg=TINY)


def close(a, b, rel=1e-4):
    """Equal up to float32 rounding, measured against the logits' scale."""
    return np.max(np.abs(a - b)) <= rel * np.max(np.abs(b))


def one_by_one(model, tokens, cache):
    return np.concatenate([model.forward([t], cache) for t in tokens])


def check_batched_equals_sequential(model, prompt, new):
    c1, c2 = model.new_cache(), model.new_cache()
    model.forward(prompt, c1)
    model.forward(prompt, c2)
    batched, sequential = model.forward(new, c1), one_by_one(model, new, c2)
    assert batched.shape == (len(new), model.vocab) and batched.dtype == np.float32
    assert close(batched, sequential), np.max(np.abs(batched - sequential))
    assert c1.length == c2.length == len(prompt) + len(new)


# --- the forward, on a tiny random Llama ---------------------------------------------------------

def test_one_call_over_9_tokens_equals_9_single_token_calls(tiny):
    check_batched_equals_sequential(tiny, [3, 1, 4, 1, 5], [9, 2, 6, 5, 3, 5, 8, 9, 7])


def test_looped_verify_equals_naive(tiny):
    c1, c2 = tiny.new_cache(), tiny.new_cache()
    tokens = [3, 1, 4, 1, 5, 9, 2, 6]
    assert close(tiny.forward(tokens, c1, looped=True), tiny.forward(tokens, c2, looped=False))


@pytest.mark.parametrize("looped", [True, False])
@pytest.mark.parametrize("n", [1, 3])
def test_everything_stays_float32(tiny, looped, n):
    """A float64 scalar anywhere promotes the activations, and x @ W then copies W to float64 (10x slower)."""
    c = tiny.new_cache()
    tiny.forward([3, 1, 4], c, looped=looped)
    logits = tiny.forward([5, 9, 2][:n], c, looped=looped)
    assert logits.dtype == np.float32 and c.kv.dtype == np.float32


@pytest.mark.parametrize("shape", [(7, 3), (64, 20_001)], ids=["small", "larger than a cache: by blocks"])
def test_apply_looped_is_one_matrix_vector_product_per_row(shape):
    rng = np.random.default_rng(1)
    x, W = rng.normal(size=(5, shape[0])).astype(np.float32), rng.normal(size=shape).astype(np.float32)
    assert np.allclose(apply(x, W, looped=True), x @ W, rtol=1e-5, atol=1e-4)
    assert np.allclose(apply(x, np.asfortranarray(W), looped=True), x @ W, rtol=1e-5, atol=1e-4)  # the head: E.T


def test_truncate_then_forward_equals_a_fresh_forward(tiny):
    prompt, rejected, accepted = [3, 1, 4, 1, 5], [9, 2, 6, 5], [8, 8]
    c = tiny.new_cache()
    tiny.forward(prompt, c)
    kept = c.copy()
    tiny.forward(rejected, c)
    c.truncate(len(prompt))
    assert c.length == len(prompt)
    after_rollback = tiny.forward(accepted, c)
    fresh = tiny.forward(prompt + accepted, tiny.new_cache())[len(prompt):]
    assert close(after_rollback, fresh)
    c.truncate(2)
    tiny.forward([7, 7, 7], c)  # overwrites positions 2-4, which the copy still holds
    assert kept.length == len(prompt) and close(tiny.forward(accepted, kept), fresh), "copy() shares state"
    with pytest.raises(ValueError):
        c.truncate(c.length + 1)


def test_no_tokens_read_nothing(tiny):
    """forward([]) is the empty prefix of a one-token context (context[:-1]): no logits, the cache unchanged, and
    the next token's logits those of a fresh cache."""
    cache = tiny.new_cache()
    logits = tiny.forward([], cache)
    assert logits.shape == (0, tiny.w["token_embd"].shape[0]) and logits.dtype == np.float32
    assert cache.length == 0
    np.testing.assert_array_equal(tiny.forward([4], cache), tiny.forward([4], tiny.new_cache()))


def test_the_cache_grows_past_its_capacity(tiny):
    tokens = list(range(1, 12))
    small = tiny.new_cache(capacity=2)
    grown = np.concatenate([tiny.forward(tokens[:3], small), tiny.forward(tokens[3:], small)])
    assert small.capacity >= len(tokens)
    assert close(grown, tiny.forward(tokens, tiny.new_cache(capacity=64)))


def test_greedy_is_repeated_argmax_and_reuses_a_cache(tiny):
    prompt = [3, 1, 4]
    out = tiny.greedy(prompt, 6)
    ids = list(prompt)
    for _ in range(6):
        ids.append(int(np.argmax(tiny.forward(ids, tiny.new_cache())[-1])))
    assert out == ids[3:]
    c = tiny.new_cache()
    tiny.forward(prompt, c)
    assert tiny.greedy(prompt, 6, cache=c) == out, "a cache holding the prompt: only new tokens are fed"
    first = {}
    for i, t in enumerate(out):
        first.setdefault(t, i)
    stop, at = max(first.items(), key=lambda item: item[1])
    assert at > 0 and tiny.greedy(prompt, 6, stop=stop) == out[:at + 1]


class RotateHalf(Model):
    """The trap: the rotate-half rotary form (pairs i and i + head_dim / 2, as Hugging Face's Llama has it)."""

    def rope(self, x, pos):
        half = self.head_dim // 2
        angle = pos[:, None, None] * self.inv_freq
        cos, sin = np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
        first, second = x[..., :half], x[..., half:]
        return np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)


def unpermute(W, n_heads, head_dim):
    """Undo llama.cpp's permutation of Q / K's output columns: within a head, adjacent (2i, 2i + 1) go back
    to (i, i + head_dim / 2)."""
    d_in = W.shape[0]
    return W.reshape(d_in, n_heads, head_dim // 2, 2).swapaxes(2, 3).reshape(d_in, n_heads * head_dim)


def test_adjacent_pairs_on_permuted_weights_equal_rotate_half_on_the_original_ones(tiny):
    """So RotateHalf is the right form for un-permuted weights, and wrong only on the GGUF's: the NLL test's
    wrong variant is the trap, not a broken rotation."""
    w = dict(tiny.w)
    for layer in range(TINY.n_layers):
        w[f"blk.{layer}.attn_q"] = unpermute(w[f"blk.{layer}.attn_q"], TINY.n_heads, TINY.head_dim)
        w[f"blk.{layer}.attn_k"] = unpermute(w[f"blk.{layer}.attn_k"], TINY.n_kv_heads, TINY.head_dim)
    tokens = [3, 1, 4, 1, 5, 9, 2, 6]
    right = tiny.forward(tokens, tiny.new_cache())
    assert close(RotateHalf(TINY, w).forward(tokens, tiny.new_cache()), right)
    assert not close(RotateHalf(TINY, tiny.w).forward(tokens, tiny.new_cache()), right, rel=1e-2)


def write_tiny_gguf(path, model):
    """`model` as llama.cpp would write it: matrices (out, in), names with .weight, a toy BPE vocabulary."""
    from gguf import GGUFWriter
    c = model.config
    w = GGUFWriter(str(path), "llama")
    w.add_block_count(c.n_layers)
    w.add_embedding_length(c.d_model)
    w.add_feed_forward_length(c.d_ff)
    w.add_head_count(c.n_heads)
    w.add_head_count_kv(c.n_kv_heads)
    w.add_rope_freq_base(c.rope_base)
    w.add_layer_norm_rms_eps(c.eps)
    w.add_tokenizer_model("gpt2")
    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *"abcdefghijklmnopqrstuvwxyz", "Ġ", "ab", "Ġab"]
    tokens += [f"<filler {i}>" for i in range(c.vocab - len(tokens))]
    w.add_token_list(tokens)
    w.add_token_types([3, 3, 3] + [1] * (len(tokens) - 3))
    w.add_token_merges(["a b", "Ġ ab"])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    for name, a in model.w.items():
        w.add_tensor(f"{name}.weight", np.ascontiguousarray(a.T if a.ndim == 2 and name != "token_embd" else a))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return tokens


def test_the_cache_is_built_from_a_gguf_file_in_the_forwards_layout(tmp_path, tiny):
    tokens = write_tiny_gguf(tmp_path / "tiny.gguf", tiny)
    cache.build(tmp_path / "cache", source=tmp_path / "tiny.gguf", say=lambda *args, **kwargs: None)
    config, weights = cache.load(tmp_path / "cache")
    assert config["eps"] == pytest.approx(TINY.eps, rel=1e-6)  # GGUF stores it as float32
    assert Config.from_dict({**config, "eps": TINY.eps}) == TINY
    assert all(weights[k].shape == a.shape and np.array_equal(weights[k], a) for k, a in tiny.w.items())
    ids = [3, 1, 4, 1, 5]
    rebuilt = Model(Config.from_dict(config), weights)
    assert np.array_equal(rebuilt.forward(ids, rebuilt.new_cache()), tiny.forward(ids, tiny.new_cache()))
    config, data = cache.load_tokenizer_data(tmp_path / "cache")
    assert data["tokens"] == tokens and data["special"] == [0, 1, 2] and (config["bos"], config["eos"]) == (1, 2)
    toy = Tokenizer(data["tokens"], data["merges"], data["special"], config["bos"], config["eos"])
    assert toy.encode("ab ab<|im_end|>c") == [tokens.index("ab"), tokens.index("Ġab"), 2, tokens.index("c")]


def test_a_missing_cache_says_to_run_make_setup(tmp_path):
    with pytest.raises(FileNotFoundError, match="make setup"):
        cache.load(tmp_path / "nowhere")


# --- the tokenizer, over SmolLM2's own vocabulary -------------------------------------------------

@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


# Ids that transformers' SmolLM2 tokenizer gives (printed by other SmolLM2 ports' tests).
KNOWN = {"hello world": [28120, 905],
         "Hello! How can I help you today?": [19556, 17, 1073, 416, 339, 724, 346, 1834, 47],
         "Write a short story: Once upon a time": [19161, 253, 1890, 1977, 42, 4027, 1980, 253, 655],
         "Quelle est la capitale de la France ? Réponds en une phrase.":
             [65, 2726, 290, 1264, 2618, 47765, 1121, 367, 2618, 4649, 9148, 428, 2756, 96, 19870, 430, 16520,
              8715, 30]}
SYSTEM_TURN = [1, 9690, 198, 2683, 359, 253, 5356, 5646, 11173, 3365, 3511, 308, 34519, 28, 7018, 411, 407,
               19712, 8182, 2, 198]
FRANCE = SYSTEM_TURN + [1, 4093, 198, 1780, 314, 260, 3575, 282, 4649, 47, 2, 198, 1, 520, 9531, 198]


@pytest.mark.parametrize("text", sorted(KNOWN))
def test_token_ids_match_smollm2s_tokenizer(tok, text):
    assert tok.encode(text) == KNOWN[text]


def test_chat_template_matches_smollm2s(tok):
    assert tok.chat([{"role": "user", "content": "What is the capital of France?"}]) == FRANCE
    assert tok.chat([{"role": "user", "content": "What is the capital of France?"}],
                    add_generation_prompt=False) == FRANCE[:-4]
    assert (tok.bos, tok.eos) == (1, 2)


@pytest.mark.parametrize("text", ["plain ASCII, with 12 digits: 3.14159 and 2026!",
                                  "unicode: naïve café, Straße, Ελληνικά, 日本語, emoji 🙂",
                                  "  leading, trailing  \n\n\tand\r\nmixed   whitespace   ",
                                  "it's, they'll, I'd; def f(x_1):\n    return x_1 ** 2\n"])
def test_encode_then_decode_is_the_identity(tok, text):
    assert tok.decode(tok.encode(text)) == text


def test_pieces_follow_gpt2s_pattern():
    """A space stays with the word after it; a run of whitespace gives its last space to that word."""
    assert PIECE.findall("it's  a\n\n  test_x, 42!") == [
        "it", "'s", " ", " a", "\n\n ", " test", "_", "x", ",", " ", "4", "2", "!"]


def test_digits_are_split_one_by_one(tok):
    assert [tok.decode([i]) for i in tok.encode(" 2026")] == [" ", "2", "0", "2", "6"]


# --- the real model -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def smol():
    # one BLAS thread: idle OpenBLAS threads spin, and on 2 shared cores that made these tests 3x slower
    with threadpool_limits(1):
        yield load_model()


def nll(model, ids):
    logits = model.forward(ids[:-1], model.new_cache(), looped=False)
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-np.mean(logp[np.arange(len(ids) - 1), ids[1:]]))


@pytest.mark.slow
def test_the_real_model_knows_english_and_the_rope_trap_is_caught(smol, tok):
    ids = tok.encode((DATA / "corpora" / "baker.txt").read_text())
    assert len(ids) > 100
    right = nll(smol, ids)
    assert right < 3.2, f"{right:.2f} nats/token on plain prose: the forward is wrong"
    wrong = nll(RotateHalf(smol.config, smol.w), ids)
    assert wrong > 4, f"the rotate-half form on the GGUF's weights scores {wrong:.2f}: the test cannot tell"


@pytest.mark.slow
def test_the_real_model_one_call_over_9_tokens_equals_9_calls_and_looped_equals_naive(smol, tok):
    ids = tok.encode("The river runs slowly past the old mill, where children used to gather in summer.")
    check_batched_equals_sequential(smol, ids[:-9], ids[-9:])
    c1, c2 = smol.new_cache(), smol.new_cache()
    assert close(smol.forward(ids, c1, looped=True), smol.forward(ids, c2, looped=False))


@pytest.mark.slow
def test_a_fluent_greedy_answer(smol, tok):
    out = smol.greedy(FRANCE, 20, stop=tok.eos)
    assert out == [504, 3575, 282, 4649, 314, 7042, 30, 2]  # transformers' greedy answer, token for token
    assert tok.decode(out) == "The capital of France is Paris.<|im_end|>"


AUTUMN = [788, 15339, 28, 3711, 1363, 7302, 1568, 288, 260, 4340, 282, 260, 12064, 30, 378, 15339, 38927, 28, 527,
          4149, 1130, 4448, 216, 34, 34, 28, 8029, 260, 3616, 282, 260, 9989, 3645, 284, 260, 3711, 1363, 429, 2654,
          288, 253, 2276, 28, 3428, 28, 284, 8685, 11615, 282, 6354, 30, 2]


@pytest.mark.slow
def test_a_longer_greedy_answer_is_the_recorded_one(smol, tok):
    """Recorded from this code (float32, one BLAS thread); a change in the forward that moves any argmax shows."""
    prompt = tok.chat([{"role": "user", "content": "In two sentences, why do leaves change colour in autumn?"}])
    out = smol.greedy(prompt, 60, stop=tok.eos)
    assert out == AUTUMN
    assert tok.decode(out) == (
        "In autumn, leaves change colour due to the changing of the seasons. The autumn equinox, which occurs "
        "around September 22, marks the beginning of the harvest season and the leaves change from green to a "
        "deep, rich, and vibrant shade of brown.<|im_end|>")


def test_the_config_and_size_are_smollm2_135ms():
    config, weights = cache.load()
    assert config["eps"] == pytest.approx(1e-5, rel=1e-6)  # stored as float32 in the GGUF
    assert Config.from_dict({**config, "eps": 1e-5}) == Config()
    n_params = sum(w.size for w in weights.values())
    assert 134e6 < n_params < 135e6 and all(w.dtype == np.float32 for w in weights.values())
    assert weights["blk.0.ffn_down"].shape == (1536, 576), "matrices are stored (in, out)"
