"""Token ids and their names: the course's vocabulary is six letters."""

TOKENS = "abcdef"
V = len(TOKENS)


def name(token):
    """The letter for a token id: name(4) == 'e'."""
    return TOKENS[int(token)]


def names(tokens):
    """A token sequence as a string of letters: names([0, 1, 4]) == 'abe'."""
    return "".join(name(t) for t in tokens)


def token(letter):
    """The id of a letter: token('e') == 4."""
    if letter not in TOKENS or len(letter) != 1:
        raise ValueError(f"{letter!r} is not one of the tokens {TOKENS!r}")
    return TOKENS.index(letter)
