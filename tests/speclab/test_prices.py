"""PriceTable: 07's hidden tests hand best_gain a step whose prices are data (speclab/speed/prices.py)."""
import re

import numpy as np
import pytest

from speclab.speed import hardware as hw
from speclab.speed.prices import PriceTable

T, D = hw.load_model("llama-3-70b"), hw.load_model("llama-3.2-1b")
FOUR = hw.accelerator("H100", cards=4)


@pytest.mark.parametrize("step", [hw.step_time, hw.explainer_step_time])
def test_a_price_table_gives_what_its_step_gives_and_best_gain_the_same_answer(step):
    table = PriceTable(step, (T, D), FOUR, 2048, (1, 5), hw.plain_max_batch(T, FOUR, 2048))
    for cfg, n, b in [(T, 1, 1), (T, 5, 238), (D, 1, 266), (D, 5, 17)]:
        assert table(cfg, FOUR, n, 2048, b) == step(cfg, FOUR, n, 2048, b)
    assert table(T, FOUR, np.int64(5), 2048, batch=np.int64(3)) == step(T, FOUR, 5, 2048, 3)
    assert hw.best_gain(table, T, D, FOUR, 0.8, 4, 2048, 8e-4) == hw.best_gain(step, T, D, FOUR, 0.8, 4, 2048, 8e-4)


def test_a_pass_outside_the_table_says_which_was_asked_for():
    table = PriceTable(hw.step_time, (T, D), FOUR, 2048, (1, 5), 266)
    for args, said in [((T, FOUR, 4, 2048, 1), "verify pass of k + 1"), ((T, FOUR, 1, 1024, 1), "at context 2,048"),
                       ((T, FOUR, 1, 2048, 267), "266 here"), ((T, FOUR, 1, 2048, 0), "from 1"),
                       ((T, FOUR, 1, 2048, 2.5), "whole batches"),
                       ((hw.load_model("llama-2-7b"), FOUR, 1, 2048, 1), "the target and the draft you were given"),
                       ((T, hw.accelerator("A100", cards=4), 1, 2048, 1), "the accelerator you were given")]:
        with pytest.raises(AssertionError, match=re.escape(said)):
            table(*args)
