"""Time bf16 products of one 8192 x 8192 layer with 1 ... 4096 token columns on a CUDA GPU.

An optional, one-off measurement for notebook 07 (the course itself never needs a GPU):

    python devtools/gpu_matmul_check.py --out "$OUT/h200_bf16_matmul.csv"

Each size: a warm-up, then `repeats` timed bursts of `inner` back-to-back products between two
torch.cuda.synchronize() calls; the CSV keeps the median (and the fastest) time per product.
The weight matrix is 128 MiB in bf16, larger than the GPU's L2 cache, so a product with few
columns streams it from HBM every time. The result ships as data/measured/<device>_bf16_matmul.csv.
"""
import argparse
import datetime
import statistics
import subprocess
import sys
import time

D = 8192
COLUMNS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("torch is not installed here: no measurement (the notebook runs without this file)")
    if not torch.cuda.is_available():
        sys.exit("torch has no CUDA device here: no measurement")
    dev = torch.device("cuda")
    name = torch.cuda.get_device_name(dev)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:  # nvidia-smi missing: the header says so
        driver = "unknown"
    torch.manual_seed(0)
    w = torch.randn(D, D, dtype=torch.bfloat16, device=dev)
    rows = []
    for n in COLUMNS:
        x = torch.randn(D, n, dtype=torch.bfloat16, device=dev)
        inner = max(2, min(50, int(20000 // n)))  # ~ a few ms per burst
        for _ in range(3):                         # warm-up: kernel choice, clocks
            y = w @ x
        torch.cuda.synchronize()
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            for _ in range(inner):
                y = w @ x
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) / inner)
        med, best = statistics.median(times), min(times)
        bytes_moved = 2 * (D * D + 2 * D * n)       # weights + input + output columns, bf16
        flops = 2 * D * D * n
        rows.append((n, med, best, bytes_moved / med / 1e12, flops / med / 1e12))
        print(f"  {n:5d} columns: {med * 1e6:9.1f} us  {bytes_moved / med / 1e12:6.2f} TB/s"
              f"  {flops / med / 1e12:7.1f} TFLOP/s", flush=True)
    del y
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with open(args.out, "w") as f:
        f.write(f"# bf16 product of an {D}x{D} weight matrix with n token columns (torch.matmul)\n")
        f.write(f"# measured {stamp} on {name}, driver {driver}, torch {torch.__version__}, "
                f"CUDA {torch.version.cuda}\n")
        f.write(f"# median of {args.repeats} synchronised bursts after 3 warm-up products; "
                "bytes = weights + input + output; by devtools/gpu_matmul_check.py\n")
        f.write("n_tokens,median_s,min_s,achieved_TBps,achieved_TFLOPs\n")
        for n, med, best, tbps, tflops in rows:
            f.write(f"{n},{med:.4e},{best:.4e},{tbps:.3f},{tflops:.2f}\n")
    print(f"wrote {args.out} ({name})")


if __name__ == "__main__":
    main()
