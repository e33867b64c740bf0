"""speclab: the helpers the speculative-decoding notebooks share, in six rooms.

  rules/      the rules and their exact distributions
      sampling     sample_from(p, u) and a scripted rng for exact tests
      speculative  reference versions of what 01-04 teach, and the one speculative round (verify_drafts)
                   that every other round in speclab calls or is tested against
      exact        exact enumeration of a round's outcomes and the first two tokens (04)
      streaks      acceptance that comes in streaks: agreement bits, their replay, exact answers (05)
      candidates   several candidates per position: exact samplers, the shortcut, exact enumeration (09)
      trees        token trees: shapes, tree attention masks, value per pass, price on 07's roofline (09)
  models/     what drafts and what verifies
      tokens       the six-letter vocabulary
      tables       the 6x6 target and draft tables, blend and temper
      ngram        character n-gram models over one shared alphabet (08)
      kneserney    a character Kneser-Ney n-gram: the baseline a neural model must beat (10)
      smollm/      SmolLM2-135M-Instruct in NumPy: loader, tokenizer, Llama forward with a KV cache (10)
      tinyllama    smollm's Model with a tiny config and random weights: the stand-in graded tests hand (10)
  decoding/   rounds run many times
      simulate     vectorised rounds in NumPy, for experiments and sweeps (04-06)
      sweeps       the seed page's sweep experiments as a plain loop (05-06)
      textspec     speculative generation for models that see the whole context (08)
      realruns     08's k-sweep runs with three more seeds, run ahead of time and stored (data/)
      specloop     speculative decoding of a Llama with a KV cache: the loop, rollback, prompt lookup,
                   early exit, replayed rounds, the CPU clock (10)
  speed/      costs, hardware and the roofline
      costs        expected tokens, speedup, best k, break-even cost (05-06)
      hardware     model configs, accelerator specs, bytes, MACs, step times, memory, batch limits (07)
      serving      one deployment over every batch, priced by the learner's functions once solved (07)
      roofline     time W @ X on this CPU and read its roofline off the times; a measured GPU table (07)
  views/      figures and widgets
      style        colours and figure habits shared by every notebook
      widgets      small builders for sliders that change a figure (live: built once, moved in place)
      onetoken     figures of one drafted token: p against q, p rebuilt from its parts (02-03)
      roundview    a picture of one round: drafts, accept tests, what comes out (04)
      timeline     plain vs speculative schedules drawn on one time axis
      figures/     each notebook's widget figure, nbNN.py: build_<thing>/update_<thing> for widgets.live
  plumbing/   out of the way
      checks       plain-Python comparisons the graded tests use
      isolate      grade an exercise on its own by lending the reference of an earlier one
      pending      a cell that needs an unsolved exercise prints one line naming it, not empty axes
      datafiles    where the course's data lives: data/ in a checkout, speclab/data/ in a wheel
      fastagg      an Agg canvas that keeps laid-out text and rendered glyphs between a widget's draws
      labels       many short labels drawn as kept pictures of their texts

The package itself re-exports what every notebook's first cell uses: the tokens, the tables, sample_from.
"""
from .rules.sampling import ScriptedRNG, sample_from
from .models.tables import blend, draft, target, temper
from .models.tokens import TOKENS, V, name, names, token

__all__ = ["ScriptedRNG", "sample_from", "blend", "draft", "target", "temper",
           "TOKENS", "V", "name", "names", "token"]
