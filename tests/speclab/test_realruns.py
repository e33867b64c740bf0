"""data/realtext_repeats.json, notebook 08's stored repeat runs, is what its committed script makes now."""
import subprocess
import sys

from grading.course import REPO
from speclab.decoding import realruns


def test_stored_repeats_are_a_fresh_run_of_the_recipe():
    # About 2 CPU-seconds: the 24 generations, rerun from their seeds, must give the stored numbers digit for digit.
    run = subprocess.run([sys.executable, str(REPO / "data" / "make_realtext_repeats.py"), "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr + run.stdout


def test_load_repeats_gives_three_seeds_per_corpus_and_k():
    stored = realruns.load_repeats()
    recipe = realruns.RECIPE
    assert sorted(stored) == sorted((c, k) for c in recipe["corpora"] for k in recipe["ks"])
    for (corpus, k), group in stored.items():
        assert [r["seed"] for r in group] == recipe["seeds"]
        for r in group:
            assert r["positions"] >= recipe["n_out"] and 1 <= r["tokens_per_call"] <= k + 1
            assert 0 < r["beta_mean"] < 1


def test_a_stored_run_is_the_notebooks_generation():
    # One run recomputed here, in this process, through the same path the notebook's experiment cell takes.
    want = realruns.repeat_run("code", 2, 204)
    got = next(r for r in realruns.load_repeats()["code", 2] if r["seed"] == 204)
    assert got == want
