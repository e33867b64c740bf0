"""What speculation buys: expected tokens per target call, speedup, the best k, the break-even cost.

Reference versions of what notebooks 05 and 06 teach, plus the exact Markov-table
analysis the notebooks put beside the paper's i.i.d. formula, the draft-step overhead
model (07), and the published figures the notebooks quote.

Names. alpha (`a`) is always the paper's acceptance rate: the expected acceptance of one
drafted token, sum over x of min(p(x), q(x)), averaged over contexts. The NumPy
walk-through's "alpha" is a blend weight (draft = w * target + (1 - w) * other), and its
"accept rate" column is the *kept fraction*: drafts kept / drafts made in a run,
(tokens per call - 1) / k, which is (alpha + ... + alpha^k) / k for an i.i.d. pair and
falls with k.

Cost model (Leviathan et al. 2023, section 3.4): a round costs one target call plus
k draft calls, a draft call costing c target calls, so

    speedup = tokens per round / (1 + k * c).
"""
import numpy as np

# --- notebook 05: the i.i.d. formula and the cost model -------------------------------


def expected_tokens(a, k):
    """Expected tokens per target call when every draft is accepted independently with probability a.

    1 + a + ... + a^k = (1 - a^(k+1)) / (1 - a), and k + 1 at a = 1. Works on arrays of a and of k.
    """
    a, k = np.asarray(a, dtype=float), np.asarray(k)
    one = a == 1.0
    safe = np.where(one, 0.0, a)  # keeps 0/0 out of the unused branch
    out = np.where(one, k + 1.0, (1 - safe ** (k + 1)) / (1 - safe))
    return float(out) if out.ndim == 0 else out


def speedup(tokens_per_call, k, c):
    """Walltime factor of speculation: tokens per round over the round's cost 1 + k * c."""
    return tokens_per_call / (1 + k * c)


def best_k(a, c, k_max):
    """The k in 1..k_max with the largest expected speedup (the smallest such k on a tie)."""
    ks = range(1, int(k_max) + 1)
    return max(ks, key=lambda k: (speedup(expected_tokens(a, k), k, c), -k))


# --- notebook 06: break-even --------------------------------------------------------


def break_even_cost(tokens_per_call, k):
    """The draft cost c* at which speedup is exactly 1: (tokens - 1) / k."""
    return (tokens_per_call - 1) / k


# --- what a draft step really costs (notebooks 06 and 07) ----------------------------
#
# At batch one a decode step is memory-bound, so the *ideal* price of a draft step is the
# time to read its weights: t_draft = draft bytes / bandwidth, and c = t_draft / t_target.
# A small model never gets there. Every step also pays a fixed cost that does not shrink
# with the model: launching its kernels (a dozen or more per layer: norms, projections,
# attention, MLP, residual adds), the all-reduces when it is split over several cards,
# sampling the token, and the host loop that starts the next step. The course models
# that as one constant per draft step:
#
#     c_realistic = (t_draft_bytes + t_overhead) / t_target.
#
# DRAFT_STEP_OVERHEAD_S = 0.8 ms. Where the figure comes from:
#   * kernel launches: a 16-layer draft such as Llama-3.2-1B runs on the order of 300
#     kernels per step, at a few microseconds each to launch and finish: 0.5-1 ms when
#     the steps are not captured in a CUDA graph;
#   * a measured pair: Chen et al. 2023 (arXiv 2302.01318) serve Chinchilla 70B
#     at 14.1 ms per token and their 4B draft at 1.8 ms per token on 16 TPU v4 chips
#     (c = 1.8 / 14.1 = 0.128, the c ~ 0.13 the course quotes). Reading 4B bf16 weights
#     (8 GB) at 16 x 1.2 TB/s takes about 0.42 ms, so about 1.4 ms of each draft step
#     is not weight traffic;
#   * 0.8 ms, inside that 0.5-1.4 ms range, makes the 1B draft step of the hardware
#     explainer's deployment (2.5 GB over four H100s, 0.19 ms of bytes) cost about 1 ms.
# It is a model, not a measurement of any one system: CUDA graphs and fused kernels can
# cut it several-fold, a Python serving loop can double it. The notebooks show the ideal
# and the realistic c side by side.
DRAFT_STEP_OVERHEAD_S = 0.8e-3


def draft_cost(t_draft, t_target, overhead=0.0):
    """The draft cost c: one draft step's time over one target step's time.

    t_draft is the draft step's bandwidth-bound time (its weight bytes over bandwidth),
    t_target the target step's, both in seconds; `overhead` (seconds) is added to every
    draft step: c = (t_draft + overhead) / t_target. overhead=0 gives the ideal c, and
    overhead=DRAFT_STEP_OVERHEAD_S the course's realistic one. Works on arrays.
    """
    t_draft, t_target, overhead = (np.asarray(v, dtype=float) for v in (t_draft, t_target, overhead))
    if np.any(t_target <= 0) or np.any(t_draft < 0) or np.any(overhead < 0):
        raise ValueError("times must be non-negative and the target's step time positive")
    out = (t_draft + overhead) / t_target
    return float(out) if out.ndim == 0 else out


def best_speedup(a, c, k_max=16):
    """(k, speedup): the best expected speedup over k = 1..k_max, and the k that achieves it."""
    k = best_k(a, c, k_max)
    return k, speedup(expected_tokens(a, k), k, c)


def best_speedup_grid(alphas, cs, k_max=16):
    """Best expected speedup over k = 1..k_max on a grid: shape (len(alphas), len(cs))."""
    a = np.asarray(alphas, dtype=float)[:, None, None]
    c = np.asarray(cs, dtype=float)[None, :, None]
    k = np.arange(1, k_max + 1, dtype=float)[None, None, :]
    tokens = np.where(a >= 1.0, k + 1, (1 - a ** (k + 1)) / np.where(a >= 1.0, 1.0, 1 - a))
    return (tokens / (1 + k * c)).max(axis=-1)


def corollary_bound(a, c):
    """The paper's corollary: if a > c, k = 1 already gives speedup (1 + a) / (1 + c) > 1."""
    return (1 + a) / (1 + c)


# --- published figures the notebooks quote --------------------------------------------

# Leviathan, Kalman & Matias 2023 (ICML; arXiv 2211.17192), Table 2: T5-XXL (11B) target,
# T5-small (77M) draft, walltime speedup over T5X's own decoding, gamma drafts per round and
# the measured alpha (their E[beta], the mean of sum min(p, q) over the contexts decoded).
TABLE2_T5_SMALL = [
    {"task": "EnDe", "decoding": "argmax", "gamma": 7, "alpha": 0.75, "speedup": 3.4},
    {"task": "EnDe", "decoding": "sample", "gamma": 7, "alpha": 0.62, "speedup": 2.6},
    {"task": "CNNDM", "decoding": "argmax", "gamma": 5, "alpha": 0.65, "speedup": 3.1},
    {"task": "CNNDM", "decoding": "sample", "gamma": 5, "alpha": 0.53, "speedup": 2.3},
]

# Chen et al. 2023 (arXiv 2302.01318): Chinchilla 70B served on 16 TPU v4 at 14.1 ms per
# token, a 4B draft at 1.8 ms per token, K = 4 drafts per round; Table 1 reports
# 1.92x on XSum and 2.46x on HumanEval.
CHEN = {"pair": "4B drafting for Chinchilla 70B", "K": 4, "t_target_s": 14.1e-3, "t_draft_s": 1.8e-3,
        "speedup": {"XSum": 1.92, "HumanEval": 2.46}}

# --- the paper's alpha for a table pair, and the exact Markov-table answer -------------


def context_acceptance(P, Q):
    """beta per context: the chance a drafted token survives, sum over x of min(p, q), one per row."""
    return np.minimum(np.asarray(P, dtype=float), np.asarray(Q, dtype=float)).sum(axis=-1)


def stationary(T):
    """The stationary distribution of a row-stochastic matrix (left eigenvector for eigenvalue 1)."""
    T = np.asarray(T, dtype=float)
    n = len(T)
    A = np.vstack([T.T - np.eye(n), np.ones(n)])
    b = np.zeros(n + 1)
    b[-1] = 1.0
    pi = np.linalg.lstsq(A, b, rcond=None)[0]
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def paper_alpha(P, Q):
    """The paper's alpha for a table pair: beta averaged over the target chain's stationary contexts."""
    return float(stationary(P) @ context_acceptance(P, Q))


def round_transition(P, Q, k):
    """V x V: the chance a round that starts at context x ends on token z (its last emitted token)."""
    P, Q = np.asarray(P, dtype=float), np.asarray(Q, dtype=float)
    M = np.minimum(P, Q)             # M[x, y]: draft y from context x and keep it
    R = np.clip(P - Q, 0.0, None)    # R[x, z]: reject at x, then the residual gives z
    T, Mj = np.zeros_like(P), np.eye(len(P))
    for _ in range(k):
        T += Mj @ R
        Mj = Mj @ M
    return T + Mj @ P                # all k kept: the bonus comes from the target


def start_distribution(P, Q, k):
    """Where rounds start in a long run: the stationary distribution of round_transition(P, Q, k).

    A round starts on the token the previous round ended on, and rounds end more often
    just after a hard context, so this differs from stationary(P), where the text spends its time.
    """
    return stationary(round_transition(P, Q, k))


def markov_round_stats(P, Q, k, start=None):
    """Exact (kept fraction, tokens per call) of speculation with tables P, Q and k drafts.

    The number of drafts kept from context x is sum over j = 1..k of (M^j 1)[x] with
    M = min(P, Q) elementwise: the Markov-table version of a + a^2 + ... + a^k. `start`
    is the distribution of the context each round starts from; by default the long-run
    one (stationary under round_transition), which is what a long run of rounds sees.
    """
    P, Q = np.asarray(P, dtype=float), np.asarray(Q, dtype=float)
    M = np.minimum(P, Q)
    if start is None:
        start = start_distribution(P, Q, k)
    start = np.asarray(start, dtype=float)
    kept, v = np.zeros(len(P)), np.ones(len(P))
    for _ in range(k):
        v = M @ v
        kept += v
    drafts_kept = float(start @ kept)
    return drafts_kept / k, 1.0 + drafts_kept


def solve_alpha(tokens_per_call, k, tol=1e-12, expected=None):
    """The a whose expected_tokens(a, k) equals tokens_per_call (bisection; 1 <= tokens <= k + 1).

    expected: the expected_tokens to invert (notebook 05 passes the learner's own: the course's is hidden
    from the kernel that grades 05, grading/kernels/hidden.py); the course's by default."""
    expected = expected or expected_tokens
    if not 1.0 <= tokens_per_call <= k + 1:
        raise ValueError(f"tokens per call must lie in [1, {k + 1}], got {tokens_per_call}")
    lo, hi = 0.0, 1.0
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if expected(mid, k) < tokens_per_call:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
