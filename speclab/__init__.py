"""speclab: the helpers the speculative-decoding notebooks share.

Modules, one concern each:
  tokens       the six-letter vocabulary
  tables       the 6x6 target and draft tables, blend and temper
  sampling     sample_from(p, u) and a scripted rng for exact tests
  speculative  reference versions of what notebooks 01-04 teach
  timeline     plain vs speculative schedules drawn on one time axis
  costs        expected tokens, speedup, best k, break-even cost (notebooks 05-06)
  hardware     model configs, accelerator specs, bytes, MACs, step times (notebook 07)
  style        colours and figure habits shared by every notebook
  widgets      small builders for sliders that redraw a figure
  checks       plain-Python comparisons the graded tests use
"""
from .sampling import ScriptedRNG, sample_from
from .tables import blend, draft, target, temper
from .tokens import TOKENS, V, name, names, token

__all__ = ["ScriptedRNG", "sample_from", "blend", "draft", "target", "temper",
           "TOKENS", "V", "name", "names", "token"]
