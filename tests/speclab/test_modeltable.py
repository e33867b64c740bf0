"""ModelTable: 08's hidden tests hand verify_context_round models whose distributions are data
(speclab/models/modeltable.py)."""
import re

import numpy as np
import pytest

from speclab.decoding.textspec import draft_tokens, play_round
from speclab.models.modeltable import ModelTable
from speclab.models.ngram import corpus_ids, corpus_model
from speclab.rules.sampling import ScriptedRNG


def reach(model, context, drafted):
    return ModelTable(model, [context + drafted[:i] for i in range(len(drafted) + 1)])


@pytest.mark.parametrize("order", [1, 2, 6])
@pytest.mark.parametrize("start", [500, 507])  # ten tokens, or three: shorter than what an order-6 model reads
def test_a_model_table_gives_what_its_model_gives_bit_for_bit(order, start):
    model, context, drafted = corpus_model("code", order), corpus_ids("code")[start:510].tolist(), [3, 17, 40]
    table = reach(model, context, drafted)
    for i in range(len(drafted) + 1):
        prefix = context + drafted[:i]
        longer = [[7, 7] + prefix] if len(prefix) >= order - 1 else []  # the same tokens read
        for asked in [prefix, tuple(prefix), np.array(prefix), prefix[-max(order - 1, 1):]] + longer:
            got = table(asked)
            assert type(got) is np.ndarray and got.tobytes() == model(prefix).tobytes(), (order, i, asked)
    got = table(context)
    got[:] = 0.0  # the caller's copy
    assert table(context).tobytes() == model(context).tobytes()


def test_a_round_on_model_tables_emits_what_it_emits_on_the_models():
    target, draft, rng = corpus_model("prose", 6), corpus_model("prose", 2), np.random.default_rng(3)
    for i in range(50):
        context = corpus_ids("prose")[100 * i:100 * i + 10].tolist()
        drafted = draft_tokens(draft, context, 4, rng)
        us = rng.random(6).tolist()
        want, got = ScriptedRNG(us), ScriptedRNG(us)
        assert play_round(reach(target, context, drafted), reach(draft, context, drafted), context, drafted, got) \
            == play_round(target, draft, context, drafted, want) and got.calls == want.calls


def test_a_context_outside_the_table_says_which_was_asked_for():
    table = reach(corpus_model("code", 3), [5, 6, 7, 8], [9, 10])
    assert table.contexts == [[7, 8], [8, 9], [9, 10]], "one row per context, keyed by what the model reads"
    for asked, said in [([5, 6, 7, 9], "ends [7, 9]"), ([8, 9, 10, 11], "ends [10, 11]"), ([8], "ends [8]")]:
        with pytest.raises(AssertionError, match=re.escape(said) + ".*context \\+ drafted\\[:i\\]"):
            table(asked)
