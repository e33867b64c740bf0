"""speclab.decoding.specloop, speclab.models.tinyllama and speclab.models.kneserney: notebook 10's loop, its stand-in model, its baseline.

Depends on: speclab.models.tinyllama (speclab.models.smollm.Model with random weights, no data), speclab.rules.sampling, data/corpora (KneserNey).
"""
from functools import partial

import numpy as np
import pytest

from speclab import ScriptedRNG
from speclab.decoding import specloop as sl
from speclab.models.kneserney import KneserNey, held_out
from speclab.models.tinyllama import tiny

PROMPT = [1, 2, 3, 4, 5, 1, 2, 3]


@pytest.fixture(scope="module")
def model():
    return tiny(seed=0)


def test_one_pass_equals_single_steps_and_both_kernels_agree(model):
    tokens = [3, 1, 4, 1, 5, 9, 2, 6]
    one = model.forward(tokens, model.new_cache())
    cache = model.new_cache()
    steps = np.vstack([model.forward([t], cache) for t in tokens])
    assert one.dtype == np.float32 and one.shape == (8, model.config.vocab)
    assert np.abs(one - steps).max() < 1e-4
    assert np.abs(model.forward(tokens, model.new_cache(), looped=False) - one).max() < 1e-4


def test_the_output_depends_on_what_the_cache_holds(model):
    clean, stale = model.new_cache(), model.new_cache()
    model.forward([1, 2], clean)
    model.forward([1, 2, 7, 7], stale)
    copy = clean.copy()
    assert np.abs(model.forward([3], clean) - model.forward([3], stale)).max() > 1e-2
    stale.truncate(2)
    assert np.abs(model.forward([5], stale) - model.forward([5], copy)).max() == 0


@pytest.mark.parametrize("k", [0, 1, 3, 8])
@pytest.mark.parametrize("draft", ["lookup", "shallow", "none"])
def test_greedy_speculation_is_greedy_decoding(model, k, draft):
    drafts = {"lookup": sl.prompt_lookup, "shallow": sl.ShallowDraft(model.exit_at(1)), "none": sl.no_draft}
    run = sl.Run()
    out = sl.speculative_generate(model, PROMPT, 40, k, drafts[draft], run=run)
    assert out == model.greedy(PROMPT, 40)
    assert sum(run.kept) + run.rounds >= 40 and all(0 <= a <= d <= k for a, d in zip(run.kept, run.drafted))


def test_a_prefilled_cache_gives_the_same_answer(model):
    cache = model.new_cache()
    model.forward(PROMPT[:-1], cache)
    assert sl.speculative_generate(model, PROMPT, 30, 4, sl.prompt_lookup, cache=cache) == model.greedy(PROMPT, 30)


@pytest.mark.parametrize("k", [1, 4, 7])
def test_replay_gives_the_rounds_of_the_real_run(model, k):
    run = sl.Run()
    out = sl.speculative_generate(model, PROMPT, 40, k, sl.prompt_lookup, run=run)
    replayed = sl.replay(out, PROMPT, k, sl.prompt_lookup)
    assert (replayed.drafted, replayed.kept) == (run.drafted, run.kept)


def test_an_exit_is_the_first_layers_then_the_final_norm_and_the_tied_head(model):
    """exit_guesses reads the head after L blocks of one teacher-forced pass: what the same model cut at L
    (exit_at, a forward of its own) predicts, and at L = all layers what the model predicts."""
    tokens = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]
    guesses = sl.exit_guesses(model, tokens, {1, 2}, last=6)
    for L in (1, 2):
        alone = np.argmax(model.exit_at(L).forward(tokens, model.exit_at(L).new_cache()), axis=1)[-6:]
        assert guesses[L].tolist() == alone.tolist()
    agree = sl.exit_agreement(model, tokens, [1], last=6)
    assert agree == {1: float(np.mean(guesses[1] == guesses[2]))}
    assert sl.exit_agreement(model, tokens, [model.config.n_layers], last=6) == {model.config.n_layers: 1.0}


def test_kept_tokens_are_the_drafts_each_round_kept():
    run = sl.Run(drafted=[2, 0, 3, 1], kept=[1, 0, 3, 0])
    assert run.kept_tokens(list("abcdefghi")) == list("adef")   # rounds emit a|b, c, d e f|g, h


def test_the_sampled_rule_keeps_x_with_probability_p_and_corrects_from_p_without_x(model):
    row = model.forward([2, 9, 4], model.new_cache())[-1]
    p = sl.softmax(row)
    x = int(np.argsort(p)[-2])
    rows = np.vstack([row, row])
    emitted, kept = sl.judge_drafts([x], rows, ScriptedRNG([p[x] * 0.999, 0.5]))
    assert kept == 1 and emitted[0] == x
    # rejected: the correction is drawn from p without x; scanning u over a fine grid recovers it exactly
    residual = sl.without(p, x)
    assert residual[x] == 0 and abs(residual.sum() - 1) < 1e-12
    for u in (0.0, 0.3, 0.77, 0.999):
        emitted, kept = sl.judge_drafts([x], rows, ScriptedRNG([min(p[x] * 1.001, 0.9999), u]))
        assert kept == 0 and emitted == [int(np.searchsorted(np.cumsum(residual), u, side="right"))]
    # accept mass p[x] plus reject mass (1 - p[x]) times the residual is p, exactly (notebook 03)
    first = (1 - p[x]) * residual
    first[x] += p[x]
    assert np.abs(first - p).max() < 1e-12


def _stale_reads(prompt, passes):
    """(reads, rows): for each row a stale run used, everything its passes had fed up to that row (the cache
    is never cut), and the row itself."""
    log, reads, used = [], [], []
    for i, (fed, rows) in enumerate(passes):
        fresh = len(prompt) if i == 0 else 1
        kept = 0
        while kept < len(fed) - fresh and fed[fresh + kept] == int(np.argmax(rows[fresh - 1 + kept])):
            kept += 1
        reads += [log + fed[:fresh + j] for j in range(kept + 1)]
        used += list(rows[fresh - 1:fresh + kept])
        log = log + fed
    return reads, used


def test_the_stale_loop_is_greedy_decoding_of_the_text_with_its_rejected_drafts_spliced_in(model):
    """Notebook 10's Diagnose, checked on the model: each row the stale loop used is the last row of a plain
    forward over everything its cache had been fed by then, and that differs from the text after a rejection."""
    floor, _ = sl.damage_by_position(sl.speculative_generate, model, PROMPT, 40, 4, sl.prompt_lookup)
    assert floor.max() < 1e-5
    rec = sl.Recording(model)
    out = sl.speculative_generate(rec, PROMPT, 40, 4, sl.prompt_lookup, stale=True)
    reads, used = _stale_reads(PROMPT, rec.passes)
    reads = reads[:40]
    for seq, t, u in zip(reads, out, used):
        row = model.forward(seq, model.new_cache())[-1]
        assert int(np.argmax(row)) == t and np.abs(row - u).max() < 1e-4
    spliced = [seq != list(PROMPT) + out[:j] for j, seq in enumerate(reads)]
    assert any(spliced), "this prompt and draft must leave rejected drafts behind (else the test says nothing)"
    tv, _ = sl.damage_by_position(partial(sl.speculative_generate, stale=True), model, PROMPT, 40, 4, sl.prompt_lookup)
    assert tv[~np.array(spliced)].max() < 1e-5 and tv[np.array(spliced)].min() > 1e-4


def test_stale_cache_tv(model):
    assert sl.stale_cache_tv(model, [3, 1, 4], []) == 0.0
    assert 0 < sl.stale_cache_tv(model, [3, 1, 4], [7, 7]) < 1


@pytest.mark.parametrize("context,k,n,want", [([1, 2, 3, 4, 5, 1, 2, 3], 2, 3, [4, 5]), ([7, 8, 9], 4, 3, []),
                                               ([1, 2, 9, 2, 5, 2], 3, 3, [5, 2]), ([1, 1, 1, 1], 2, 3, [1]),
                                               ([4, 5, 6, 9, 5, 6, 1, 4, 5, 6], 3, 3, [9, 5, 6]),
                                               ([4, 5, 6, 9, 5, 6, 1, 4, 5, 6], 3, 1, [1, 4, 5])])
def test_prompt_lookup(context, k, n, want):
    assert sl.prompt_lookup(context, k, n) == want


def test_predicted_speedup_of_a_perfect_free_draft_is_k_plus_one():
    run = sl.Run(drafted=[4] * 5, kept=[4] * 5)
    assert sl.predicted_speedup(run, {n: 1.0 for n in range(1, 10)}) == 5.0
    assert sl.predicted_speedup(run, {n: 1.0 for n in range(1, 10)}, c=0.25) == 2.5


def test_kneser_ney_is_a_distribution_and_its_order_helps():
    train, test = held_out("prose", 400)
    ids = [ord(ch) for ch in train if ord(ch) < 128]
    kn5, kn1 = KneserNey(ids, 5), KneserNey(ids, 1)
    context = [ord(ch) for ch in "The hac"]
    total = sum(kn5.next_probs(context + [v])[-1] for v in range(128))
    assert abs(total - 1) < 1e-9
    text = [ord(ch) for ch in train[-4:] + test]
    assert kn5.cross_entropy(text, first=4) < kn1.cross_entropy(text, first=4) - 1.0


def test_plain_greedy_is_greedy_decoding_with_or_without_a_prefilled_cache(model):
    cache = model.new_cache()
    model.forward(PROMPT[:-1], cache)
    assert sl.plain_greedy(model, PROMPT, 20) == model.greedy(PROMPT, 20) == sl.plain_greedy(model, PROMPT, 20, cache)


def test_a_loop_written_for_an_empty_cache_runs_on_a_prefilled_target_and_reads_only_what_follows_the_prefix(model):
    """Prefilled: the learner's speculative_generate (which starts from target.new_cache() and feeds the whole
    prompt) gives the same tokens on it, and its first forward reads only the prompt's last token and the drafts."""
    served = sl.Prefilled(model, PROMPT[:-1])
    recording = sl.Recording(model)
    served.target = recording
    want = sl.speculative_generate(model, PROMPT, 24, 4, sl.prompt_lookup)
    assert sl.speculative_generate(served, PROMPT, 24, 4, sl.prompt_lookup) == want
    fed = [tokens for tokens, _ in recording.passes]
    assert fed[0][:1] == PROMPT[-1:] and len(fed[0]) <= 5, fed[0]
    rows = served.forward(PROMPT + [7, 7], served.new_cache())   # the rows of one pass over everything
    assert rows.shape[0] == len(PROMPT) + 2
    assert np.abs(rows - model.forward(PROMPT + [7, 7], model.new_cache())).max() < 1e-4
    assert sl.plain_greedy(served, PROMPT, 20) == model.greedy(PROMPT, 20), "a loop that reads cache.length: passed on"


def _unsolved(*args, **kwargs):
    raise NotImplementedError


def test_notebook_10s_demos_run_the_learners_loop_and_draft_once_solved_and_the_courses_until_then(model):
    """your_loop / your_lookup: the learner's functions where they answer (seen by what they were called with), the
    course's while they raise NotImplementedError, so a blank copy's experiment still prints greedy's tokens."""
    assert sl.your_lookup(_unsolved)([1, 2, 3, 1, 2], 2) == [3, 1]
    assert sl.your_lookup(lambda context, k: ["mine", k])([1, 2], 3) == ["mine", 3]
    greedy = model.greedy(PROMPT, 16)
    assert sl.your_loop(_unsolved)(sl.Prefilled(model, PROMPT[:-1]), PROMPT, 16, 4, sl.your_lookup(_unsolved)) == greedy
    seen = []

    def learners_loop(target, prompt, n, k, draft, rng=None):
        seen.append(k)
        return sl.speculative_generate(target, prompt, n, k, draft, rng)
    assert sl.your_loop(learners_loop)(model, PROMPT, 16, 3, sl.prompt_lookup) == greedy and seen == [3]
