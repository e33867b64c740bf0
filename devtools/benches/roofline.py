"""Notebook 07: the CPU roofline measurement, and how fast the deployment widget's numbers are."""
import time

from speclab import hardware as hw


def bench():
    start = time.perf_counter()
    m = hw.time_matmul(columns=(1, 2, 4, 8, 16, 32), repeats=5)
    yield "07 CPU matmul experiment (4096 x 8192 float32, 1-32 columns)", f"{time.perf_counter() - start:.2f} s"
    bw, peak = hw.fit_roofline(m)
    yield "07 this machine: bandwidth from the 1-column product", f"{bw / 1e9:.1f} GB/s"
    yield "07 this machine: best FLOP rate reached", f"{peak / 1e9:.1f} GFLOP/s"
    per_pass = ", ".join(f"{n}:{s * 1e3:.0f}" for n, s in zip(m["columns"], m["seconds"]))
    yield "07 ms per product, by columns", per_pass
    target, draft, acc = hw.load_model("llama-3-70b"), hw.load_model("llama-3.2-1b"), hw.accelerator("H100", 4)
    start = time.perf_counter()
    for _ in range(10):  # what one widget redraw computes: an 80-point speedup curve and the slower batch
        [hw.speculative_speedup(target, draft, acc, 0.8, 4, 0, b) for b in range(1, 81)]
        hw.slower_batch(target, draft, acc, 0.8, 4, 0)
    yield "07 widget numbers per redraw (no drawing)", f"{(time.perf_counter() - start) * 100:.1f} ms"
