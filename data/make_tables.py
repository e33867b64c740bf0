"""Regenerate data/tables.json, the course's 6x6 probability tables.

The recipe (the one the seed page used): each table is the row-wise softmax of a
6x6 array of normal(0, 2.5) logits drawn with numpy.random.default_rng(seed),
for seeds 1 (the target), 2 and 3 (the "other" tables drafts are blended with).

The JSON file, not this script, is what the course loads: a future NumPy may
change its random streams, and the course must not change with it.

    python data/make_tables.py          # rewrite data/tables.json
    python data/make_tables.py --check  # exit 1 if the file no longer matches
"""
import json
import re
import sys
from pathlib import Path

import numpy as np

SEEDS = {"target": 1, "other2": 2, "other3": 3}
V, LOGIT_SCALE = 6, 2.5
PATH = Path(__file__).with_name("tables.json")


def softmax_table(seed):
    logits = np.random.default_rng(seed).normal(0.0, LOGIT_SCALE, size=(V, V))
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def build():
    tables = {name: softmax_table(seed).tolist() for name, seed in SEEDS.items()}
    return {"recipe": __doc__.split("\n\n")[1].replace("\n", " "),
            "tokens": "abcdef", "seeds": SEEDS, "tables": tables}


def to_json(doc):
    """JSON with one table row per line, so a diff of the file reads like the table."""
    text = json.dumps(doc, indent=1)
    return re.sub(r"\[\s+([-0-9.e,\s]+?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text) + "\n"


def main(argv):
    fresh = build()
    if "--check" in argv:
        stored = json.loads(PATH.read_text())["tables"]
        # NumPy's exp may differ in the last bit between CPUs (its SIMD paths), so the recipe
        # matches when every entry agrees to 1e-15; a wrong seed or scale moves them by > 1e-3.
        same = stored.keys() == fresh["tables"].keys() and all(
            np.abs(np.array(stored[k]) - np.array(fresh["tables"][k])).max() <= 1e-15 for k in stored)
        print("data/tables.json matches the recipe" if same else "data/tables.json differs from the recipe")
        return 0 if same else 1
    PATH.write_text(to_json(fresh))
    print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
