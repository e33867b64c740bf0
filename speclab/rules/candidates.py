"""Several candidates for one position (notebook 09): samplers that keep the output exact, the
shortcut that does not, and the exact enumerations that prove which is which.

Rules (target p, draft q, n candidates):
  "mss"        SpecInfer's multi-step speculative sampling (Miao et al. 2024, Algorithm 2,
               VerifyStochastic): candidates drawn from q with replacement; each is tested
               against the CURRENT residual r, and after a rejection r <- norm(max(0, r - q));
               after n rejections one sample of the last residual.
  "recursive"  recursive rejection sampling (Jeon et al. 2024): candidates drawn WITHOUT
               replacement (candidate i from q with the earlier ones removed, renormalised:
               q_i); candidate i is tested against r with q_i, and r <- norm(max(0, r - q_i)).
  "shortcut"   BROKEN on purpose (the notebook's break-it): every candidate is tested against
               the ORIGINAL p, the first that passes is kept, and after n rejections one sample
               of residual(p, q). For n = 1 it is the correct rule; for n >= 2 it is biased.

Randomness (the course contract, extended to n candidates): the n candidates first, one
rng.random() each through sample_from; then candidate by candidate one rng.random() per accept
test, stopping at the first acceptance; after n rejections one rng.random() for the final
sample. So a call uses n + i uniforms (accepted at test i) or 2n + 1 (none accepted).

    draw_candidates(q, n, rng, replace=True)        the n candidates
    mss_sample / recursive_sample / shortcut_sample (p, q, n, rng) -> one token
    scripted_position(p, q, n, uniforms, rule)       the same, in plain Python, for hidden tests
    shortcut_tv_formula(p, q, n)                     the shortcut's TV from p, in closed form
    walk(p, q, cands, rule)                          output distribution given the candidates
    enumerate_output(p, q, n, walk, replace=True)    exact output distribution, by enumeration
    exact_output(p, q, n, rule)                      the same, vectorised over every tuple
    accepted_at(p, q, n, rule)                       P(candidate i is kept and is token y)
    acceptance(p, q, n, rule)                        P(some candidate is kept)
    mss_acceptance_curve(p, q, n_max)                the same for n = 1..n_max, closed form

Token trees, which test candidates at every depth, are speclab.rules.trees.
"""
import itertools

import numpy as np

from .sampling import sample_from
from .speculative import residual

# How several candidates are verified at one position (not speclab.rules.speculative.RULES, the one-draft rules).
MULTIDRAFT_METHODS = ("mss", "recursive", "shortcut")


def _check_rule(rule):
    if rule not in MULTIDRAFT_METHODS:
        raise ValueError(f"rule must be one of {MULTIDRAFT_METHODS}, got {rule!r}")


def _without(q, x):
    """q with token x removed, renormalised (the next draw of sampling without replacement)."""
    q = np.array(q, dtype=float)
    q[x] = 0.0
    s = q.sum()
    return q / s if s > 0 else q


# --- several candidates at one position: samplers --------------------------------------------

def draw_candidates(q, n, rng, replace=True):
    """n candidates from q, one rng.random() each through sample_from; without replacement,
    candidate i is drawn from q with candidates 1..i-1 removed and renormalised."""
    q = np.asarray(q, dtype=float)
    cands, qi = [], q
    for _ in range(n):
        x = sample_from(qi, rng.random())
        cands.append(int(x))
        if not replace:
            qi = _without(qi, x)
    return cands


def mss_sample(p, q, n, rng):
    """One token distributed as p: SpecInfer's multi-step speculative sampling with n candidates."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    cands = draw_candidates(q, n, rng)
    r = p
    for x in cands:
        if rng.random() * q[x] < r[x]:
            return x
        r = residual(r, q)
    return int(sample_from(r, rng.random()))


def recursive_sample(p, q, n, rng):
    """One token distributed as p: recursive rejection sampling, n candidates without replacement."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    cands = draw_candidates(q, n, rng, replace=False)
    r, qi = p, q
    for x in cands:
        if rng.random() * qi[x] < r[x]:
            return x
        r = residual(r, qi)
        qi = _without(qi, x)
    return int(sample_from(r, rng.random()))


def shortcut_sample(p, q, n, rng):
    """BROKEN on purpose: every candidate tested against the original p; residual(p, q) at the end."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    cands = draw_candidates(q, n, rng)
    for x in cands:
        if rng.random() * q[x] < p[x]:
            return x
    return int(sample_from(residual(p, q), rng.random()))


SAMPLERS = {"mss": mss_sample, "recursive": recursive_sample, "shortcut": shortcut_sample}


def scripted_position(p, q, n, uniforms, rule):
    """(token, uniforms used) of one position under `rule` ("mss", "recursive" or "shortcut"), in plain
    Python: no numpy, so a notebook's hidden tests can trust it whatever a student's cell did to numpy.

    The course's randomness contract with the uniforms given as a list: the n candidates first (one
    uniform each, sample_from's rule: the smallest i with cumsum > u), then one uniform per accept
    test (keep x iff u * q_i[x] < r[x]), stopping at the first acceptance, then one more after n
    rejections. Notebook 09's hidden tests grade its samplers against this.
    """
    def plain(x):
        return [float(v) for v in (x.ravel().tolist() if hasattr(x, "ravel") else x)]

    def res(r, q):
        d = [max(0.0, a - b) for a, b in zip(r, q)]
        s = sum(d)
        return [v / s for v in d] if s > 0 else list(r)

    def draw(dist, u):
        c = 0.0
        for i, v in enumerate(dist):
            c += v
            if c > u:
                return i
        return max(i for i, v in enumerate(dist) if v > 0)

    def without(q, x):
        q = [0.0 if i == x else v for i, v in enumerate(q)]
        s = sum(q)
        return [v / s for v in q] if s > 0 else q

    _check_rule(rule)
    p, q, us, k = plain(p), plain(q), list(uniforms), 0
    cands, qs, qi = [], [], q
    for _ in range(n):
        cands.append(draw(qi, us[k]))
        qs.append(qi)
        k += 1
        if rule == "recursive":
            qi = without(qi, cands[-1])
    r = p
    for x, qi in zip(cands, qs):
        u = us[k]
        k += 1
        if u * qi[x] < (p if rule == "shortcut" else r)[x]:
            return x, k
        if rule != "shortcut":
            r = res(r, qi)
    return draw(res(p, q) if rule == "shortcut" else r, us[k]), k + 1


def shortcut_tv_formula(p, q, n):
    """The shortcut's exact TV from p in closed form: beta (1 - beta^(n-1)) TV(norm(min(p, q)), residual(p, q)),
    with beta = 1 - sum min(p, q). 0 when beta is 0 (nothing is rejected) or 1 (p and q share no token: every
    candidate is rejected and the residual is p); the shortcut is exact in both cases."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    overlap = np.minimum(p, q)
    beta = 1.0 - overlap.sum()
    if beta <= 0 or beta >= 1:
        return 0.0
    return float(beta * (1 - beta ** (n - 1)) * 0.5 * np.abs(overlap / overlap.sum() - residual(p, q)).sum())


# --- several candidates: exact output distributions -------------------------------------------

def walk(p, q, cands, rule):
    """The output distribution of one position once the candidates are known (accept uniforms
    integrated out): candidate i is kept with min(1, r(x)/q_i(x)) if the ones before it were not."""
    _check_rule(rule)
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    out, stay, r, qi = np.zeros_like(p), 1.0, p, q
    for x in cands:
        test = p if rule == "shortcut" else r
        a = min(1.0, test[x] / qi[x])
        out[x] += stay * a
        stay *= 1.0 - a
        if rule != "shortcut":
            r = residual(r, qi)
        if rule == "recursive":
            qi = _without(qi, x)
    return out + stay * (residual(p, q) if rule == "shortcut" else r)


def enumerate_output(p, q, n, walk, replace=True):
    """Exact output distribution: the sum over every tuple of n candidates of
    P(tuple) * walk(p, q, tuple). P(tuple) = prod q(x_i) with replacement; without, each factor
    is the probability of x_i under q with the earlier candidates removed (0 for a repeat)."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    total = np.zeros(len(p))
    for cands in itertools.product(range(len(q)), repeat=n):
        weight, qi = 1.0, q
        for x in cands:
            weight *= qi[x]
            if not replace:
                qi = _without(qi, x)
        if weight > 0:
            total += weight * walk(p, q, cands)
    return total


def _tuples(q, n, replace):
    """(cands (M, n), prob (M,), qs (M, n, V)): every tuple with positive probability, vectorised."""
    q = np.asarray(q, dtype=float)
    V = len(q)
    cands = np.array(list(itertools.product(range(V), repeat=n)), dtype=np.int64).reshape(-1, n)
    prob = np.ones(len(cands))
    qs = np.empty((len(cands), n, V))
    qi = np.broadcast_to(q, (len(cands), V)).copy()
    rows = np.arange(len(cands))
    for i in range(n):
        qs[:, i] = qi
        prob *= qi[rows, cands[:, i]]
        if not replace:
            qi[rows, cands[:, i]] = 0.0
            s = qi.sum(axis=1, keepdims=True)
            qi = np.divide(qi, s, out=np.zeros_like(qi), where=s > 0)
    keep = prob > 0
    return cands[keep], prob[keep], qs[keep]


def _residuals(r, q):
    """Row-wise residual(r, q) for (M, V) arrays (rows with no positive mass keep r)."""
    d = np.clip(r - q, 0.0, None)
    s = d.sum(axis=1, keepdims=True)
    return np.where(s > 0, d / np.where(s > 0, s, 1.0), r / r.sum(axis=1, keepdims=True))


def accepted_at(p, q, n, rule="mss"):
    """(A, final): A[i, y] = P(candidate i+1 is the one kept and it is token y); final[y] = P(all n
    are rejected and the final sample is y). A.sum(0) + final is the output distribution."""
    _check_rule(rule)
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    V = len(p)
    cands, prob, qs = _tuples(q, n, replace=rule != "recursive")
    M = len(cands)
    rows = np.arange(M)
    r = np.broadcast_to(p, (M, V)).copy()
    stay = prob.copy()
    A = np.zeros((n, V))
    for i in range(n):
        x, qi = cands[:, i], qs[:, i]
        test = np.broadcast_to(p, (M, V)) if rule == "shortcut" else r
        a = np.minimum(1.0, test[rows, x] / qi[rows, x])
        np.add.at(A[i], x, stay * a)
        stay = stay * (1.0 - a)
        if rule != "shortcut":
            r = _residuals(r, qi)
    fallback = np.broadcast_to(residual(p, q), (M, V)) if rule == "shortcut" else r
    return A, stay @ fallback


def exact_output(p, q, n, rule="mss"):
    """The exact output distribution of one position with n candidates under `rule`."""
    A, final = accepted_at(p, q, n, rule)
    return A.sum(axis=0) + final


def acceptance(p, q, n, rule="mss"):
    """P(one of the n candidates is kept): 1 - P(all rejected)."""
    A, _ = accepted_at(p, q, n, rule)
    return float(A.sum())


def mss_acceptance_curve(p, q, n_max):
    """[P(some of n candidates kept) for n = 1..n_max] under "mss", in closed form: 1 - prod of the
    rejection probabilities 1 - sum min(r_j, q) of the successive residuals. Works on (..., V) arrays."""
    r, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    reject, out = np.ones(r.shape[:-1]), []
    for _ in range(n_max):
        beta = 1.0 - np.minimum(r, q).sum(axis=-1)
        reject = reject * np.clip(beta, 0.0, 1.0)
        out.append(1.0 - reject)
        d = np.clip(r - q, 0.0, None)
        s = d.sum(axis=-1, keepdims=True)
        r = np.where(s > 0, d / np.where(s > 0, s, 1.0), r)
    return np.stack(out, axis=-1)


# --- notebook 09's break-it: the measure and the diagnosis ------------------------------------

def sampled_tv(sampler, p, q, n, trials, rng):
    """TV distance between the frequencies of `trials` tokens from sampler(p, q, n, rng) and p: the damage of a
    sampler as a measurement sees it, noise floor included (09's measure, run on the student's own sampler)."""
    p = np.asarray(p, dtype=float)
    counts = np.bincount([int(sampler(p, q, n, rng)) for _ in range(trials)], minlength=len(p))
    return 0.5 * float(np.abs(counts / trials - p).sum())


def shortcut_favours(p, q):
    """The largest factor by which the shortcut's output, as the candidates grow without bound, emits a token more
    often than p (over p > 0; 09's diagnosis): every reached candidate keeps min(p, q), so the output settles on
    min(p, q) / alpha, and the factor is min(1, q/p) / alpha at its largest (1.0 when nothing is ever kept)."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    kept = np.minimum(p, q)
    alpha = kept.sum()
    if alpha < 1e-12:
        return 1.0
    on = p > 0
    return float(np.max(kept[on] / alpha / p[on]))
