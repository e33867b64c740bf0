"""speclab.models.tokens: the six-letter vocabulary."""
import pytest

from speclab import name, names, token


def test_token_names_round_trip():
    assert names([0, 1, 4]) == "abe" and name(5) == "f" and token("e") == 4
    with pytest.raises(ValueError):
        token("z")
