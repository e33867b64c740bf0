"""Notebook 08's repeat runs: the k sweep of section 5 with three more seeds, run once and stored.

Section 5 measures tokens per target call at each k with four runs, to show how much one run's
numbers move: the notebook's own run, and three more seeds. The three more are 24 generations of
1,500 characters (about 2 s), more than the notebook's time allows, so they are run here, by the
same code the notebook runs (speclab.decoding.textspec.generate with corpus_model's models, beta measured
as the notebook's betas() measures it), and stored in data/realtext_repeats.json:

    python data/make_realtext_repeats.py          # rewrite the file
    python data/make_realtext_repeats.py --check  # exit 1 if it no longer matches a fresh run

tests/speclab/test_realruns.py reruns them and compares. The file keeps, per run, what the
notebook reads: tokens per call, and the mean beta over the positions it generated (with their
count, so that runs can be pooled).

    repeat_run(corpus, k, seed) -> {"corpus", "k", "seed", "tokens_per_call", "beta_mean", "positions"}
    run_all() -> every run of RECIPE, in order
    load_repeats() -> {(corpus, k): [run, run, run]} from the stored file
"""
import json

import numpy as np

from ..plumbing.datafiles import DATA
from ..models.ngram import corpus_ids, corpus_model
from .textspec import generate

RECIPE = {"corpora": ["prose", "code"], "ks": [1, 2, 4, 8], "seeds": [204, 304, 404],
          "target_order": 6, "draft_order": 4, "prompt": 200, "n_out": 1500}
PATH = DATA / "realtext_repeats.json"


def betas(target, draft, prompt, gen):
    """beta = sum(min(p, q)) at every context the generation passed through: the notebook's betas()."""
    text = list(prompt) + gen.tokens
    return np.array([np.minimum(target(text[:i]), draft(text[:i])).sum() for i in range(len(prompt), len(text))])


def repeat_run(corpus, k, seed, recipe=RECIPE):
    """One generation of the recipe, as the notebook's experiment cell runs it, and what it measured."""
    target, draft = corpus_model(corpus, recipe["target_order"]), corpus_model(corpus, recipe["draft_order"])
    prompt = corpus_ids(corpus)[:recipe["prompt"]].tolist()
    gen = generate(target, draft, prompt, recipe["n_out"], k, np.random.default_rng(seed))
    beta = betas(target, draft, prompt, gen)
    return {"corpus": corpus, "k": k, "seed": seed, "tokens_per_call": gen.tokens_per_call,
            "beta_mean": float(beta.mean()), "positions": len(beta)}


def run_all(recipe=RECIPE):
    return [repeat_run(corpus, k, seed, recipe)
            for corpus in recipe["corpora"] for k in recipe["ks"] for seed in recipe["seeds"]]


def load_repeats(path=PATH):
    """{(corpus, k): the stored runs of that corpus and k, one per seed}."""
    stored = json.loads(path.read_text())
    out = {}
    for run in stored["runs"]:
        out.setdefault((run["corpus"], run["k"]), []).append(run)
    return out
