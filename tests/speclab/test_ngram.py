"""speclab.models.ngram and speclab.decoding.textspec: the character models and the generalised round of notebook 08.

Depends on: data/corpora/ (the two corpora), speclab.models.ngram, speclab.decoding.textspec, speclab.rules.speculative.
"""
import math
from pathlib import Path

import numpy as np
import pytest

from speclab import ScriptedRNG, sample_from
from speclab.models import ngram
from speclab.decoding import textspec
from speclab.rules.speculative import residual, tv_distance

CORPORA = Path(__file__).resolve().parents[2] / "data" / "corpora"


@pytest.fixture(scope="module")
def corpus():
    texts = {name: ngram.load_corpus(name) for name in ("prose", "code")}
    alpha = ngram.alphabet(*texts.values())
    ids = {name: ngram.encode(text, alpha) for name, text in texts.items()}
    tables = {name: ngram.build_tables(ids[name][:40_000], 4, len(alpha)) for name in ids}
    return texts, alpha, ids, tables


# --- the corpora ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["prose", "code"])
def test_corpus_size_and_characters(name):
    text = ngram.load_corpus(name)
    assert 100_000 <= len(text.encode()) <= 400_000, f"the {name} corpus must be 100-400 KB"
    assert text.isascii(), f"the {name} corpus is plain ASCII"
    assert "\t" not in text and "\r" not in text


def test_sources_and_licences_are_recorded():
    sources = (CORPORA / "SOURCES.md").read_text()
    for needed in ("prose_jargon.txt", "code_stdlib.txt", "public domain", "Jargon File", "4.4.7",
                   "PSF-LICENSE.txt", "Python Software Foundation License"):
        assert needed in sources, f"SOURCES.md must mention {needed!r}"
    psf = (CORPORA / "PSF-LICENSE.txt").read_text()
    assert "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2" in psf
    assert "Python Software Foundation" in psf and "All Rights Reserved" in psf


def test_code_corpus_is_the_listed_stdlib_modules():
    text = ngram.load_corpus("code")
    assert text.startswith("# Author: Steven J. Bethard")  # argparse.py comes first
    for marker in ("class ArgumentParser(", "class TextWrapper", "def iglob(", "def fnmatchcase("):
        assert marker in text


# --- alphabet, encoding, counting ------------------------------------------------------------

def test_shared_alphabet_and_round_trip(corpus):
    texts, alpha, ids, _ = corpus
    assert alpha == "".join(sorted(set(texts["prose"]) | set(texts["code"])))
    assert len(alpha) == 96
    for name in texts:
        assert ngram.decode(ids[name][:500], alpha) == texts[name][:500]
    with pytest.raises(ValueError, match="not in the alphabet"):
        ngram.encode("caf\u00e9", alpha)


def plain_counts(seq, m, V, gap=0):
    out = {}
    for i in range(m + gap, len(seq)):
        out.setdefault(tuple(seq[i - gap - m:i - gap]), np.zeros(V))[seq[i]] += 1
    return out


@pytest.mark.parametrize("m, gap", [(0, 0), (1, 0), (2, 0), (5, 0), (1, 1), (3, 1), (2, 3)])
def test_next_counts_matches_a_plain_loop(corpus, m, gap):
    _, alpha, ids, _ = corpus
    seq = ids["code"][:5_000]
    fast, slow = ngram.next_counts(seq, m, len(alpha), gap), plain_counts(seq.tolist(), m, len(alpha), gap)
    assert fast.keys() == slow.keys()
    for key in fast:
        assert np.array_equal(fast[key], slow[key])
    assert sum(v.sum() for v in fast.values()) == len(seq) - m - gap


def test_next_counts_edge_cases():
    assert ngram.next_counts([1, 2], 2, 4) == {}
    assert ngram.next_counts([], 0, 4) == {}
    t = ngram.next_counts([0, 1, 0, 1, 2], 1, 4)
    assert set(t) == {(0,), (1,)} and t[(0,)].tolist() == [0, 2, 0, 0] and t[(1,)].tolist() == [1, 0, 1, 0]
    assert all(type(k[0]) is int for k in t)
    skip = ngram.next_counts([0, 1, 2, 0, 1, 2, 0], 1, 3, gap=1)  # the token two after each context token
    assert {k: v.tolist() for k, v in skip.items()} == {(0,): [0, 0, 2], (1,): [2, 0, 0], (2,): [0, 1, 0]}
    assert ngram.next_counts([1, 2], 1, 3, gap=1) == {}


# --- smoothing ------------------------------------------------------------------------------

def test_ngram_dist_worked_example():
    tables = [ngram.next_counts([0, 1, 0, 1, 2], m, 3) for m in range(2)]
    assert np.allclose(ngram.ngram_dist(tables, [0], 3), [1 / 8, 19 / 24, 1 / 12])
    assert np.allclose(ngram.ngram_dist(tables, [2], 3), [3 / 8, 3 / 8, 1 / 4])   # unseen: back off
    assert np.allclose(ngram.ngram_dist(tables, [], 3), [3 / 8, 3 / 8, 1 / 4])


def test_every_probability_is_positive_and_sums_to_one(corpus):
    _, alpha, ids, tables = corpus
    rng = np.random.default_rng(0)
    for name in ids:
        model = ngram.NGram(tables=tables[name], order=4, V=len(alpha))
        for _ in range(200):
            i = int(rng.integers(0, 100_000))
            p = model(ids[name][i:i + int(rng.integers(0, 7))].tolist())
            assert p.shape == (len(alpha),) and p.min() > 0 and math.isclose(p.sum(), 1.0, abs_tol=1e-12)


def test_model_memo_is_safe_and_looks_only_at_its_window(corpus):
    _, alpha, ids, tables = corpus
    model = ngram.NGram(tables=tables["code"], order=3, V=len(alpha))
    ctx = ids["code"][100:110].tolist()
    first = model(ctx)
    first[:] = 0  # a caller editing its copy must not change the model
    assert np.array_equal(model(ctx), model.uncached(ctx[-2:]))
    assert np.array_equal(model([7, 7, 7] + ctx), model(ctx))
    assert np.allclose(model(ctx), ngram.ngram_dist(tables["code"][:3], ctx, len(alpha)))
    with pytest.raises(ValueError):
        ngram.NGram(tables=tables["code"], order=6, V=len(alpha))


def test_ngram_built_from_ids_equals_one_built_from_tables(corpus):
    _, alpha, ids, tables = corpus
    a = ngram.NGram(ids["prose"][:40_000], order=3, V=len(alpha))
    b = ngram.NGram(tables=tables["prose"], order=3, V=len(alpha))
    ctx = ids["prose"][50:60].tolist()
    assert np.array_equal(a(ctx), b(ctx))



def test_the_models_one_step_formula_equals_the_reference_loop(corpus):
    """NGram computes ngram_dist's Witten-Bell in one dot product; the two must agree to rounding."""
    _, alpha, ids, tables = corpus
    rng = np.random.default_rng(11)
    for name in ids:
        for order in (1, 2, 4):
            model = ngram.NGram(tables=tables[name], order=order, V=len(alpha))
            for _ in range(150):
                i = int(rng.integers(0, 100_000))
                ctx = ids[name][i:i + int(rng.integers(0, 9))].tolist()
                assert np.abs(model(ctx) - ngram.ngram_dist(tables[name][:order], ctx, len(alpha))).max() < 1e-15
    unseen = ngram.encode("qzxj", alpha).tolist()   # backs off past contexts the text never had
    model = ngram.NGram(tables=tables["code"], order=4, V=len(alpha))
    assert np.abs(model(unseen) - ngram.ngram_dist(tables["code"][:4], unseen, len(alpha))).max() < 1e-15
    tiny = [ngram.next_counts([0, 1, 0, 1, 2], m, 3) for m in range(2)]
    assert np.allclose(ngram.NGram(tables=tiny, order=2, V=3)([0]), [1 / 8, 19 / 24, 1 / 12])


def test_corpus_models_are_counted_once_and_shared():
    alpha = ngram.shared_alphabet()
    assert alpha == ngram.alphabet(ngram.load_corpus("prose"), ngram.load_corpus("code"))
    ids = ngram.corpus_ids("code")
    assert not ids.flags.writeable and ngram.decode(ids[:300], alpha) == ngram.load_corpus("code")[:300]
    tables = ngram.corpus_tables("code")
    assert len(tables) == ngram.CORPUS_MAX_ORDER and tables is not ngram.corpus_tables("code")
    assert all(a is b for a, b in zip(tables, ngram.corpus_tables("code")))   # the counts themselves are shared
    fresh = ngram.next_counts(ids, 3, len(alpha))
    assert fresh.keys() == tables[3].keys() and all(np.array_equal(fresh[k], tables[3][k]) for k in fresh)
    model = ngram.corpus_model("code", 4)
    assert model is ngram.corpus_model("code", 4) and model.order == 4 and model.V == len(alpha)
    ctx = ids[1_000:1_010].tolist()
    assert np.allclose(model(ctx), ngram.ngram_dist(tables[:4], ctx, len(alpha)))
    for bad in (0, ngram.CORPUS_MAX_ORDER + 1):
        with pytest.raises(ValueError):
            ngram.corpus_model("code", bad)
    with pytest.raises(TypeError):   # the notebook's models cannot be rebuilt on other tables
        type(model)(tables=ngram.corpus_tables("prose"), order=2, V=len(alpha))

# --- the generalised round --------------------------------------------------------------------

def models(corpus, name="code", target_order=4, draft_order=2):
    _, alpha, _, tables = corpus
    V = len(alpha)
    return ngram.NGram(tables=tables[name], order=target_order, V=V), ngram.NGram(tables=tables[name], order=draft_order, V=V)


def test_round_follows_the_randomness_contract(corpus):
    target, draft = models(corpus)
    ids = corpus[2]["code"]
    ctx = ids[200:210].tolist()
    drafted = textspec.draft_tokens(draft, ctx, 3, ScriptedRNG([0.1, 0.5, 0.9]))
    rng = ScriptedRNG([0.0, 0.0, 0.0, 0.42])
    out, kinds = textspec.play_round(target, draft, ctx, drafted, rng)
    assert out == drafted + [sample_from(target(ctx + drafted), 0.42)] and kinds == ["accepted"] * 3 + ["bonus"]
    assert rng.left == 0
    rng = ScriptedRNG([0.0, 0.999999, 0.3])
    x1 = drafted[0]
    out, kinds = textspec.play_round(target, draft, ctx, drafted, rng)
    p, q = target(ctx + [x1]), draft(ctx + [x1])
    if p[drafted[1]] / q[drafted[1]] <= 0.999999:
        assert out == [x1, sample_from(residual(p, q), 0.3)] and kinds == ["accepted", "resampled"]
        assert rng.left == 0


def test_first_token_of_a_round_is_exactly_the_target(corpus):
    target, draft = models(corpus, "prose")
    ids = corpus[2]["prose"]
    for i in range(1_000, 40_000, 1_300):
        ctx = ids[i - 4:i].tolist()
        p, q = target(ctx), draft(ctx)
        first = np.minimum(p, q) + (1 - np.minimum(p, q).sum()) * residual(p, q)
        assert np.abs(first - p).max() < 1e-14


def test_two_token_joint_is_the_targets(corpus):
    """Correct rule under the bound, no_resample far above it (5,000 trials, k = 2).

    tv_bound(J, n, fail=1e-7): a correct sampler exceeds it with probability below 1e-7.
    """
    target, draft = models(corpus, "code", 4, 1)
    alpha = corpus[1]
    ctx = ngram.encode("    def _", alpha).tolist()
    J = textspec.exact_first_two(target, ctx)
    assert math.isclose(J.sum(), 1.0, abs_tol=1e-12)
    n = 5_000
    bound = textspec.tv_bound(J, n, fail=1e-7)
    good = textspec.first_two_frequencies(target, draft, ctx, 2, n, np.random.default_rng(1))
    assert tv_distance(good, J) < bound
    bad = textspec.first_two_frequencies(target, draft, ctx, 2, n, np.random.default_rng(1), rule="no_resample")
    assert tv_distance(bad, J) > bound


def test_generation_bookkeeping(corpus):
    target, draft = models(corpus)
    gen = textspec.generate(target, draft, corpus[2]["code"][:100].tolist(), 400, 3, np.random.default_rng(4))
    assert len(gen.tokens) == len(gen.kinds) == sum(gen.rounds) >= 400
    assert all(1 <= r <= 4 for r in gen.rounds)
    assert gen.accepted == sum(r - 1 for r in gen.rounds)
    assert gen.kinds.count("bonus") == sum(r == 4 for r in gen.rounds)
    assert math.isclose(gen.kept_fraction, gen.accepted / (3 * len(gen.rounds)))
    assert gen.accept_rate == gen.kept_fraction   # the old name still works
    starts = gen.round_starts
    assert starts[0] == 0 and len(starts) == len(gen.rounds)
    assert all(b - a == r for a, b, r in zip(starts, starts[1:] + [len(gen.tokens)], gen.rounds))
    assert all(gen.kinds[s - 1] in ("resampled", "bonus") for s in starts[1:])   # a round starts after the target's token


def test_a_draft_equal_to_the_target_is_always_kept(corpus):
    target, _ = models(corpus)
    gen = textspec.generate(target, target, corpus[2]["code"][:50].tolist(), 200, 4, np.random.default_rng(5))
    assert gen.accept_rate == 1.0 and set(gen.rounds) == {5}


def test_code_accepts_higher_than_prose(corpus):
    rates = {}
    for name in ("prose", "code"):
        target, draft = models(corpus, name, 4, 3)
        gen = textspec.generate(target, draft, corpus[2][name][:200].tolist(), 1_500, 4, np.random.default_rng(6))
        rates[name] = gen.accept_rate
    assert rates["code"] > rates["prose"] + 0.05, rates


# --- prompt lookup ------------------------------------------------------------------------------

def test_lookup_next_copies_the_longest_most_recent_match():
    ctx = [1, 2, 3, 9, 1, 2, 3, 7, 5, 2, 3]
    assert textspec.lookup_next(ctx, 3) == 7      # "2 3" last seen before "7" (no earlier "5 2 3")
    assert textspec.lookup_next([4, 5, 6, 4, 5], 2) == 6
    assert textspec.lookup_next([1, 2, 3], 2) is None
    assert textspec.lookup_next([8], 3) is None


def test_lookup_draft_is_one_hot_with_a_fallback():
    V = 10
    draft = textspec.lookup_draft(2, V)
    q = draft([4, 5, 6, 4, 5])
    assert q.tolist() == np.eye(V)[6].tolist()
    assert np.allclose(draft([1, 2]), np.full(V, 0.1))
    fallback = textspec.lookup_draft(2, V, fallback=lambda c: np.eye(V)[0])
    assert fallback([1, 2]).tolist() == np.eye(V)[0].tolist()


def test_lookup_draft_remembering_its_last_context_proposes_what_a_fresh_search_does():
    # The draft keeps the bytes of the context it saw last and reuses them when the next context extends
    # it or is a prefix of it; any other context, or one edited in place, must be searched afresh.
    rng = np.random.default_rng(5)
    draft = textspec.lookup_draft(3, 7)
    text = rng.integers(0, 7, 400).tolist()
    contexts = [text[:n] for n in (50, 51, 52, 40, 41, 300, 10)] + [text[:60]]
    edited = text[:80]
    contexts += [edited, edited[:79] + [(edited[79] + 1) % 7], edited[:81] + [3], text[1:90], list(reversed(text))]
    edited.append(2)
    contexts.append(edited)   # the same list object as before, grown in place
    edited[70] = (edited[70] + 3) % 7
    contexts.append(edited)   # and edited in place
    for ctx in contexts:
        want = textspec.lookup_next(list(ctx), 3)
        got = draft(ctx)
        assert got.tolist() == (np.eye(7)[want] if want is not None else np.full(7, 1 / 7)).tolist(), ctx[-6:]


def test_plain_first_two_draws_what_the_loop_of_plain_samples_draws(corpus):
    # The vectorised noise floor must be the loop's tokens, bit for bit: the same uniforms in the same order.
    _, alpha, ids, tables = corpus
    target = ngram.NGram(tables=tables["code"], order=4, V=len(alpha))
    for start in (100, 7_000):
        ctx = ids["code"][start:start + 6].tolist()
        rng = np.random.default_rng(start)
        want = np.zeros((len(alpha), len(alpha)))
        for _ in range(3_000):
            a, b = textspec.sample_plain(target, ctx, 2, rng)
            want[a, b] += 1
        got = textspec.plain_first_two(target, ctx, 3_000, np.random.default_rng(start))
        assert np.array_equal(got, want / 3_000)


def test_rounds_read_only_the_window_the_models_declare(corpus):
    # ngram's models say they read their last order - 1 tokens; the rounds then pass only those (and the
    # drafts). The same models without that word must give the same generation from a long context.
    _, alpha, ids, tables = corpus
    V = len(alpha)
    target, draft = (ngram.NGram(tables=tables["code"], order=n, V=V) for n in (4, 2))
    prompt = ids["code"][:3_000].tolist()
    windowed = textspec.generate(target, draft, prompt, 300, 3, np.random.default_rng(9))
    whole = textspec.generate(lambda c: target(c), lambda c: draft(c), prompt, 300, 3, np.random.default_rng(9))
    assert target.window == 3 and windowed.tokens == whole.tokens and windowed.kinds == whole.kinds


def test_onehot_residual_is_the_residual_of_a_one_hot_draft():
    rng = np.random.default_rng(2)
    for _ in range(50):
        p = rng.dirichlet(np.ones(8))
        x = int(rng.integers(8))
        r = textspec.onehot_residual(p, x)
        assert np.allclose(r, residual(p, np.eye(8)[x])) and r[x] == 0
        assert np.allclose(p[x] * np.eye(8)[x] + (1 - p[x]) * r, p)
    assert textspec.onehot_residual(np.array([0.0, 1.0]), 1).tolist() == [0.0, 1.0]


def test_tv_bound_is_never_below_the_noise_it_guards():
    J = np.full((4, 4), 1 / 16)
    n = 1_000
    assert textspec.tv_bound(J, n) > 0.5 * 16 * math.sqrt((1 / 16) * (15 / 16) / n)
    assert textspec.tv_bound(J, n, fail=1e-9) > textspec.tv_bound(J, n, fail=1e-3)


def test_coloured_html_escapes_and_colours():
    html = textspec.coloured_html([0, 1], ["accepted", "bonus"], "<a", {"accepted": "#0f0", "resampled": "#f00", "bonus": "#00f"})
    assert "&lt;" in html and "#0f0" in html and "#00f" in html and "<a" not in html.replace("&lt;", "")


def test_cost_ratio_orders_the_models(corpus):
    target, draft = models(corpus, "code", 4, 1)
    ctxs = [corpus[2]["code"][i - 6:i].tolist() for i in range(100, 2_100, 20)]
    assert textspec.cost_ratio(draft, target, ctxs, repeat=5) < 1.0
