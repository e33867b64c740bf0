"""The course's models: 6x6 next-token tables, and the dials that make drafts from them.

A model is a V x V row-stochastic array: row = current token, values = the
next-token distribution. The tables are loaded from data/tables.json (made by
data/make_tables.py), never regenerated at import, so they cannot drift with NumPy.
"""
import json
from functools import lru_cache

import numpy as np

from ..plumbing.datafiles import DATA

# The seed page's three drafts: blend weight and the table blended in.
DRAFTS = {"good": (0.85, "other2"), "middling": (0.55, "other2"), "poor": (0.20, "other3")}
CONTEXT = 0  # the seed page always starts from token 'a'


@lru_cache(maxsize=None)
def _load():
    doc = json.loads((DATA / "tables.json").read_text())
    return {k: np.array(v, dtype=float) for k, v in doc["tables"].items()}


def table(name):
    """A fresh copy of a stored table: 'target', 'other2' or 'other3'."""
    tables = _load()
    if name not in tables:
        raise KeyError(f"no table {name!r}; the stored tables are {sorted(tables)}")
    return tables[name].copy()


def target():
    """The target model P."""
    return table("target")


def blend(P, other, alpha):
    """alpha * P + (1 - alpha) * other: alpha = 1 is a perfect draft, 0 is pure `other`.

    This alpha is the seed page's *blend weight*, not the paper's acceptance rate.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"blend weight must lie in [0, 1], got {alpha}")
    return alpha * np.asarray(P, dtype=float) + (1.0 - alpha) * np.asarray(other, dtype=float)


def temper(P, T):
    """Each row of P re-sampled at temperature T: normalise exp(log(p) / T)."""
    if T <= 0:
        raise ValueError(f"temperature must be positive, got {T}")
    logits = np.log(np.clip(np.asarray(P, dtype=float), 1e-12, None)) / T
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def draft(kind="good"):
    """One of the seed page's drafts: 'good' (0.85), 'middling' (0.55) or 'poor' (0.20)."""
    if kind not in DRAFTS:
        raise KeyError(f"no draft {kind!r}; choose one of {sorted(DRAFTS)}")
    alpha, other = DRAFTS[kind]
    return blend(target(), table(other), alpha)


def is_model(M, V=None):
    """True if M is a square row-stochastic array (of size V, if given)."""
    M = np.asarray(M, dtype=float)
    square = M.ndim == 2 and M.shape[0] == M.shape[1] and (V is None or M.shape[0] == V)
    return bool(square and (M >= 0).all() and np.allclose(M.sum(axis=1), 1.0))
