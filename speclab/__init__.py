"""speclab: the helpers the speculative-decoding notebooks share.

Modules, one concern each:
  tokens       the six-letter vocabulary
  tables       the 6x6 target and draft tables, blend and temper
  sampling     sample_from(p, u) and a scripted rng for exact tests
  speculative  reference versions of what notebooks 01-04 teach, and the one speculative round
               (verify_drafts) that every other round in speclab calls or is tested against
  onetoken     figures of one drafted token: p against q, p rebuilt from its parts (02-03)
  roundview    a picture of one round: drafts, accept tests, what comes out (04)
  exact        exact enumeration of a round's outcomes and the first two tokens (04)
  simulate     vectorised rounds in NumPy, for experiments and sweeps (04-06)
  sweeps       the seed page's sweep experiments as a plain loop (05-06)
  costs        expected tokens, speedup, best k, break-even cost (05-06)
  streaks      acceptance that comes in streaks: agreement bits, their replay, exact answers (05)
  hardware     model configs, accelerator specs, bytes, MACs, step times, memory, batch limits (07)
  roofline     time W @ X on this CPU and read its roofline off the times; a measured GPU table (07)
  ngram        character n-gram models over one shared alphabet (08)
  textspec     speculative generation for models that see the whole context (08)
  realruns     08's k-sweep runs with three more seeds, run ahead of time and stored (data/)
  candidates   several candidates per position: exact samplers, the shortcut, exact enumeration (09)
  trees        token trees: shapes, tree attention masks, value per pass, price on 07's roofline (09)
  smollm       SmolLM2-135M-Instruct in NumPy: loader, tokenizer, Llama forward with a KV cache (10)
  tinyllama    smollm's Model with a tiny config and random weights: the stand-in graded tests hand exercises (10)
  specloop     speculative decoding of a Llama with a KV cache: the loop, rollback, prompt lookup,
               early exit, replayed rounds, the CPU clock (10)
  kneserney    a character Kneser-Ney n-gram: the baseline a neural model must beat (10)
  timeline     plain vs speculative schedules drawn on one time axis
  style        colours and figure habits shared by every notebook
  widgets      small builders for sliders that change a figure (live: built once, moved in place)
  figures      each notebook's widget figure, nbNN.py: build_<thing>/update_<thing> for widgets.live
  checks       plain-Python comparisons the graded tests use
  isolate      grade an exercise on its own by lending the reference of an earlier one
  pending      a cell that needs an unsolved exercise prints one line naming it, not empty axes
"""
from .rules.sampling import ScriptedRNG, sample_from
from .models.tables import blend, draft, target, temper
from .models.tokens import TOKENS, V, name, names, token

__all__ = ["ScriptedRNG", "sample_from", "blend", "draft", "target", "temper",
           "TOKENS", "V", "name", "names", "token"]
