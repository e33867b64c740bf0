"""Notebook 10's language model, SmolLM2-135M in NumPy: load time, the cost of a decode step and of a verify
pass over n tokens (naive x @ W against a loop of matrix-vector products), bandwidth, and memory.

    python -m devtools.bench smollm
"""
import os
import statistics
import subprocess
import sys
import time

from threadpoolctl import threadpool_limits

from speclab.speed import roofline
from speclab.plumbing.datafiles import DATA
from speclab.models.smollm import Config, Model, cache, gguf_file, load_tokenizer

REPEATS = 7
CONTEXT = 64  # tokens already in the KV cache when a step is timed

# Load and a short greedy decode in a fresh process: its peak resident memory is the notebook's floor.
PEAK_RSS = """
import resource
from threadpoolctl import threadpool_limits
threadpool_limits(1)
from speclab.models.smollm import load_model, load_tokenizer
model, tok = load_model(), load_tokenizer()
model.greedy(tok.chat([{"role": "user", "content": "What is the capital of France?"}]), 16)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def cpu_seconds(f, *args, **kwargs):
    t0 = time.process_time()
    f(*args, **kwargs)
    return time.process_time() - t0


def load_times():
    t0 = time.process_time()
    reader = gguf_file.open_gguf()
    n_bytes = sum(a.nbytes for _, a in gguf_file.tensors(reader))
    dequantise = time.process_time() - t0
    t0 = time.perf_counter()
    config, weights = cache.load()
    Model(Config.from_dict(config), weights)
    return dequantise, time.perf_counter() - t0, n_bytes


def step_times(model, tokens):
    """CPU seconds of one forward over n = 1..9 new tokens after CONTEXT cached ones, naive and looped:
    every (kernel, n) once per repeat, the order reversed every other repeat, so a burst of load elsewhere
    hits every cell alike. Returns {(looped, n): [seconds, ...]} and the wall seconds of n = 1."""
    kv = model.new_cache()
    model.forward(tokens[:CONTEXT], kv, looped=False)
    cells = [(looped, n) for looped in (True, False) for n in range(1, 10)]
    samples, wall = {cell: [] for cell in cells}, []
    for r in range(REPEATS):
        for looped, n in (cells if r % 2 == 0 else cells[::-1]):
            t0 = time.perf_counter()
            samples[looped, n].append(cpu_seconds(model.forward, tokens[CONTEXT:CONTEXT + n], kv, looped=looped))
            if n == 1:
                wall.append(time.perf_counter() - t0)
            kv.truncate(CONTEXT)
    return {cell: statistics.median(s) for cell, s in samples.items()}, statistics.median(wall)


def bench():
    # One BLAS thread: with two, the idle one spins while the other works, and on 2 shared cores that made
    # CPU time erratic and inflated (issue 43); one thread is also what the notebook times.
    with threadpool_limits(1):
        dequantise, mapped, n_bytes = load_times()
        yield "10 SmolLM2 load: GGUF read and dequantised to float32 (cold, CPU)", f"{dequantise:.2f} s for {n_bytes / 1e6:.0f} MB"
        yield "10 SmolLM2 load: float32 cache, memory-mapped (wall)", f"{mapped * 1e3:.0f} ms"
        config, weights = cache.load()
        model = Model(Config.from_dict(config), weights)
        tokens = load_tokenizer().encode((DATA / "corpora" / "baker.txt").read_text())
        t, wall1 = step_times(model, tokens)
        t1 = t[True, 1]
        yield f"10 t(1): one decode step, {CONTEXT} tokens cached (CPU, median of {REPEATS})", f"{t1 * 1e3:.1f} ms"
        for looped, name in ((True, "looped (a matrix-vector product per row)"), (False, "naive (x @ W)")):
            yield f"10 t(n)/t(1), n = 2..9, {name}", ", ".join(f"{t[looped, n] / t1:.2f}" for n in range(2, 10))
        yield "10 naive / looped at n = 2, 5, 9", ", ".join(f"{t[False, n] / t[True, n]:.2f}x" for n in (2, 5, 9))
        m = roofline.time_matmul(columns=(1,), sweeps=5, threads=1)
        bandwidth = m["weight_bytes"] / m["seconds"][0]
        yield "10 bandwidth: 4096 x 8192 float32 matrix-vector product (fastest of 5)", f"{bandwidth / 1e9:.1f} GB/s"
        yield "10 bytes per token / bandwidth (predicted t(1)) against measured t(1)", (
            f"{model.bytes_per_token / 1e6:.0f} MB / {bandwidth / 1e9:.1f} GB/s = "
            f"{model.bytes_per_token / bandwidth * 1e3:.1f} ms; measured {wall1 * 1e3:.1f} ms wall, "
            f"{t1 * 1e3:.1f} ms CPU (load average {os.getloadavg()[0]:.1f})")
    out = subprocess.run([sys.executable, "-c", PEAK_RSS], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    yield "10 peak resident memory: load + a 16-token greedy decode (goal <= 2 GB)", (
        f"{int(out.stdout.split()[-1]) / 1e9:.2f} GB")
