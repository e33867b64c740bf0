"""The roofline of the machine you are sitting at (notebook 07, section 8), and a measured one.

time_matmul times W @ X for a weight matrix W too large for the CPU's caches and X of 1, 2, 4,
..., 64 token columns, on a fixed number of BLAS threads and in alternating sweeps, so a busy
laptop disturbs every shape alike. fit_roofline reads bandwidth, peak and ridge (FLOPs per
byte, as everywhere in 07) off those times; roofline_summary says them in one line.
load_measured reads a measured table shipped in data/measured/ (an H200's bf16 matmuls).
Datasheet arithmetic (bytes, MACs, step times) is speclab.speed.hardware.
"""
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..plumbing.datafiles import DATA as DATA  # re-exported: notebook 07 opens roofline.DATA / "measured" / ...

MATMUL_COLUMNS = (1, 2, 4, 8, 16, 32, 64)


def blas_library():
    """The BLAS library NumPy calls, as threadpoolctl reports it ("openblas 0.3.31, Haswell kernels")."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl is not installed)"
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if not blas:
        return "unknown"
    info = blas[0]
    arch = f", {info['architecture']} kernels" if info.get("architecture") else ""
    return f"{info.get('internal_api', '?')} {info.get('version') or ''}{arch}".replace("  ", " ")


@contextmanager
def blas_threads(n):
    """Run the block with the BLAS library limited to n threads (threadpoolctl); yields the count
    actually fixed, or None if threadpoolctl is not installed (then nothing is fixed)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield None
        return
    with threadpool_limits(limits=n, user_api="blas"):
        yield n


def time_matmul(rows=4096, cols=8192, columns=MATMUL_COLUMNS, sweeps=3, threads=1, progress=None,
                dtype=np.float32):
    """Time W @ X for a rows x cols weight matrix W and X with each number of token columns.

    The BLAS library runs on `threads` threads (fixed, so a busy machine changes less). After one
    warm-up product of every shape, `sweeps` sweeps each time every column count once, in
    alternating order (forward, then backward, ...), so a burst of load elsewhere hits every
    shape alike. progress(sweep, sweeps, seconds of that sweep's products) is called after each
    sweep. Returns a dict: "columns", "samples" (sweeps x columns, seconds), "seconds" (the fastest
    sample of each column count: the machine's rate with the least interference), "spread" (slowest
    over fastest sample, per column count), "weight_bytes", "flops" (per product) and "threads".
    """
    rng = np.random.default_rng(0)
    w = rng.random((rows, cols), dtype=dtype)
    xs = [rng.random((cols, n), dtype=dtype) for n in columns]
    samples = np.zeros((sweeps, len(columns)))
    with blas_threads(threads) as fixed:
        for x in xs:  # warm-up: page in W, let the library pick and prepare each shape's kernel
            w @ x
        for s in range(sweeps):
            order = range(len(columns)) if s % 2 == 0 else reversed(range(len(columns)))
            for i in order:
                t0 = time.perf_counter()
                w @ xs[i]
                samples[s, i] = time.perf_counter() - t0
            if progress:
                progress(s + 1, sweeps, samples[s].copy())
    seconds = samples.min(axis=0)
    columns = np.array(columns)
    return {"columns": columns, "samples": samples, "seconds": seconds, "spread": samples.max(axis=0) / seconds,
            "weight_bytes": w.nbytes, "flops": 2.0 * rows * cols * columns, "threads": fixed}


def _fit(columns, seconds, weight_bytes, flops):
    memory_bound = columns <= 4
    bandwidth = float(np.max(weight_bytes / seconds[memory_bound])) if memory_bound.any() else weight_bytes / seconds[0]
    rates = flops / seconds
    return bandwidth, float(np.max(rates)), rates


def fit_roofline(m, bend=1.25):
    """The roofline read off a time_matmul result, as a dict (FLOPs per byte, as everywhere in 07).

    "bandwidth": the weight bytes over the fastest of the 1- to 4-column products (they are all
    memory traffic; which one is fastest depends on the library's kernels). "peak": the best FLOP
    rate any column count reached, a lower bound on the true peak. "ridge": peak / bandwidth.
    "bent": whether the curve bends within the measured range, i.e. doubling the columns of the
    widest products raised the FLOP rate by less than `bend`; if not, the true ridge lies above
    "ridge" ("ridge above X"). With per-sweep samples, "bandwidth_range", "peak_range" and
    "ridge_range" are the (lowest, highest) of the same fit made on each sweep alone.
    """
    columns, seconds = np.asarray(m["columns"]), np.asarray(m["seconds"], dtype=float)
    bandwidth, peak, rates = _fit(columns, seconds, m["weight_bytes"], m["flops"])
    bent = len(rates) >= 2 and rates[-1] < bend * rates[-2]
    out = {"bandwidth": bandwidth, "peak": peak, "ridge": peak / bandwidth, "bent": bool(bent)}
    if "samples" in m:
        fits = [_fit(columns, row, m["weight_bytes"], m["flops"])[:2] for row in np.asarray(m["samples"])]
        bws, peaks = np.array([f[0] for f in fits]), np.array([f[1] for f in fits])
        out.update(bandwidth_range=(bws.min(), bws.max()), peak_range=(peaks.min(), peaks.max()),
                   ridge_range=((peaks / bws).min(), (peaks / bws).max()))
    return out


def roofline_summary(fit):
    """One line: bandwidth, peak and the ridge ("near X" if the curve bent, "above X" if it never did)."""
    where = "near" if fit["bent"] else "above"
    line = (f"{fit['bandwidth'] / 1e9:.1f} GB/s from memory, at least {fit['peak'] / 1e9:.1f} GFLOP/s, "
            f"ridge {where} {fit['ridge']:.1f} FLOPs per byte")
    if "ridge_range" in fit:
        (b0, b1), (r0, r1) = fit["bandwidth_range"], fit["ridge_range"]
        line += f"\n(sweep by sweep: {b0 / 1e9:.1f}-{b1 / 1e9:.1f} GB/s, ridge {r0:.1f}-{r1:.1f})"
    return line


def load_measured(path):
    """(header comment lines, {column: np.array}) from a measured CSV with '#' comments, or None if absent."""
    path = Path(path)
    if not path.is_file():
        return None
    lines = path.read_text().splitlines()
    comments = [ln.lstrip("# ").rstrip() for ln in lines if ln.startswith("#")]
    rows = [ln for ln in lines if ln and not ln.startswith("#")]
    names = rows[0].split(",")
    values = np.array([[float(v) for v in r.split(",")] for r in rows[1:]])
    return comments, {n: values[:, i] for i, n in enumerate(names)}
