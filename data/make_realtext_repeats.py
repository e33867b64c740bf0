"""Regenerate data/realtext_repeats.json, notebook 08's repeat runs (speclab/decoding/realruns.py says what they are).

The runs are seeded, so a fresh run gives the same numbers on any machine with this NumPy and
Python; the JSON file, not this script, is what the notebook loads.

    python data/make_realtext_repeats.py          # rewrite data/realtext_repeats.json
    python data/make_realtext_repeats.py --check  # exit 1 if the file no longer matches a fresh run
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # run from a checkout

from speclab.decoding.realruns import PATH, RECIPE, run_all


def render():
    return json.dumps({"recipe": RECIPE, "runs": run_all()}, indent=1) + "\n"


if __name__ == "__main__":
    text = render()
    if "--check" in sys.argv:
        if PATH.read_text() != text:
            sys.exit(f"{PATH} no longer matches a fresh run: python data/make_realtext_repeats.py")
    else:
        PATH.write_text(text)
        print(f"wrote {PATH}")
