"""Notebook 07: the CPU roofline measurement, and how fast the deployment widget's numbers are."""
import os
import time

from speclab.speed import roofline, serving


def bench():
    start = time.perf_counter()
    m = roofline.time_matmul(sweeps=3, threads=1)
    yield ("07 CPU matmul experiment (4096 x 8192 float32, 1-64 columns, 3 interleaved sweeps, 1 BLAS thread)",
           f"{time.perf_counter() - start:.2f} s (load average {os.getloadavg()[0]:.1f})")
    yield "07 BLAS library", roofline.blas_library()
    fit = roofline.fit_roofline(m)
    lo, hi = fit["bandwidth_range"]
    yield "07 bandwidth: fastest 1-4 column product (sweep by sweep)", f"{fit['bandwidth'] / 1e9:.1f} GB/s ({lo / 1e9:.1f}-{hi / 1e9:.1f})"
    yield "07 best FLOP rate reached", f"{fit['peak'] / 1e9:.1f} GFLOP/s"
    yield "07 ridge", f"{'near' if fit['bent'] else 'above'} {fit['ridge']:.1f} FLOPs per byte"
    yield "07 ms per product, fastest of 3 (columns:ms)", ", ".join(f"{n}:{s * 1e3:.0f}" for n, s in zip(m["columns"], m["seconds"]))
    yield "07 spread per product, slowest / fastest", ", ".join(f"{n}:{s:.2f}" for n, s in zip(m["columns"], m["spread"]))
    s = m["seconds"]
    yield "07 ratios the prose quotes: 2/1, 8/2, 64/1 columns", f"{s[1] / s[0]:.1f}x, {s[3] / s[1]:.2f}x, {s[-1] / s[0]:.1f}x"
    start = time.perf_counter()
    for b in range(1, 11):  # what one widget redraw computes (no drawing): curves over 4096 batches, slower batch
        serving.deployment("H100", context=1024, batch=b)
    yield "07 widget numbers per redraw (no drawing)", f"{(time.perf_counter() - start) * 100:.1f} ms"
