"""Train notebook 10's two tiny character-level transformers and write them as NumPy weights.

    python3.11 -m venv .venv-train && .venv-train/bin/pip install -r data/models/requirements.txt
    apt-get download jargon-text && dpkg-deb -x jargon-text_*.deb jargon
    nice -n 10 .venv-train/bin/python data/models/make_models.py \
        --jargon jargon/usr/share/doc/jargon-text/jargon.txt.gz \
        --stdlib "$(python3.11 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"

What it writes, beside itself (the course loads these, never this script):
  tiny_target.npz, tiny_draft.npz   fp16 weights, one array per matrix (speclab/transformer.py reads them)
  tiny_reference.npz                PyTorch's float32 logits for a fixed prompt, to test the NumPy forward
  tiny_models.json                  configs, seeds, steps, wall time, loss curves, the corpus's files and hash

The corpus (about 3 MB, plain ASCII) is built here from the same two sources as notebook 08's corpora
(data/corpora/SOURCES.md) and is never committed: Python 3.11.7 standard-library modules (PSF License)
and The Jargon File 4.4.7 (public domain). It leaves out exactly what notebook 08's corpora hold
(argparse, textwrap, glob, fnmatch; the Jargon File's essay chapters and appendices), so those two files
are held-out text for both models. Tokens are ASCII codes 0..127 (V = 128): no tokenizer.

The shipped files are `--size tiny`, one thread: a fixed number of steps, so a rerun does the same
arithmetic (bit-identical results need the same PyTorch build, CPU and thread count). They took about 40
minutes for the target and 5 for the draft, on a 2-core machine shared with other jobs, at nice 10
(tiny_models.json records the times). The draft is distilled from the fp16-rounded target;
`--reuse-target` rebuilds only the draft from an existing tiny_target.npz. After training, run
`python data/models/corpus.py ... --write` to record the Kneser-Ney baselines beside the new models.

Not good enough yet. The shipped target is worse than a character 5-gram with Kneser-Ney smoothing on
held-out text (tiny_models.json "baselines": 2.27 / 2.38 nats per character on code / prose against
1.61 / 1.42): 500 steps of 16 windows is about a million characters, a third of one pass over the corpus.
`--size large` (6 layers, d = 256, 4 heads, 4.8 M parameters; 20,000 steps of 32 windows, about 82 M
characters) is the configuration meant to beat it; it has not been trained. Run it with both threads
and checkpoints, in as many sittings as the machine allows:

    nice -n 10 .venv-train/bin/python data/models/make_models.py --jargon ... --stdlib ... \
        --size large --threads 2 --checkpoints ckpt --stop-after 500      # again, to go on

What it would take, measured: a timed trial of that command (--stop-after 3, then resumed for 3 more)
took 70 s and 104 s of wall time for its two sittings of 3 steps, 28.5 s per step, on this course's
2-core machine while eight other jobs kept its load average at 13 to 17. At that pace 20,000 steps are
6.6 days; on an idle machine less (the shipped target's 500 steps of a 5x cheaper step, on one thread of
the same machine under lighter load, took 4.7 s each). Whether 20,000 steps are enough is not known
until the curve (held-out loss every 800 steps) crosses the baseline: watch it and stop when it does.
Resuming was checked: `--size tiny --stop-after 2`, run twice, left weights, optimiser state and random
generators bit-identical to one run of `--stop-after 4` (PyTorch 2.13.0+cpu, one thread).
"""
import argparse
import hashlib
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
CORPORA = HERE.parent / "corpora"
sys.path.insert(0, str(HERE))
from corpus import JARGON_TRAIN, training_corpus  # noqa: E402  (the corpus, shared with the n-gram baselines)

V = 128
CONTEXT = 128          # positions the models know; the course's cache is this long

# Sizes: "tiny" is what the course ships (trained with one thread); "large" is the configuration meant to
# beat the Kneser-Ney 5-gram baseline (tiny_models.json "baselines"), not trained yet: see the docstring.
SIZES = {
    "tiny": dict(target=dict(n_layer=4, d=192, n_head=3, exit_layer=1, seed=1),
                 draft=dict(n_layer=1, d=96, n_head=2, exit_layer=None, seed=2),
                 target_steps=500, draft_steps=300, batch=16),
    "large": dict(target=dict(n_layer=6, d=256, n_head=4, exit_layer=1, seed=1),
                  draft=dict(n_layer=1, d=128, n_head=2, exit_layer=None, seed=2),
                  target_steps=20_000, draft_steps=5_000, batch=32),
}
TARGET, DRAFT = SIZES["tiny"]["target"], SIZES["tiny"]["draft"]
PROMPT = 'def _format_usage(self, usage, actions, groups, prefix):\n    """'  # reference logits


def encode(text):
    return np.frombuffer(text.encode("ascii"), dtype=np.uint8).astype(np.int64)


# ---------------------------------------------------------------------------------------- model
class Block(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.n_head = n_head
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (t.view(B, T, self.n_head, d // self.n_head).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    """GPT-2's layout (pre-LayerNorm, learned positions, tanh-GELU), with an untied head. `exits`
    lists the layers whose output goes through the final LayerNorm and head (LayerSkip's early exit
    shares both)."""

    def __init__(self, n_layer, d, n_head, **_):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, d), nn.Embedding(CONTEXT, d)
        self.blocks = nn.ModuleList(Block(d, n_head) for _ in range(n_layer))
        self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, V, bias=False)
        self.n_layer = n_layer
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * n_layer) if name.endswith(("proj.weight", "out.weight")) else 0.02
                nn.init.normal_(p, 0.0, std)

    def forward(self, idx, exits):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        logits = {}
        for i, block in enumerate(self.blocks, start=1):
            x = block(x)
            if i in exits:
                logits[i] = self.head(self.ln_f(x))
        return logits


def exits_of(cfg):
    return sorted({cfg["n_layer"], *([cfg["exit_layer"]] if cfg["exit_layer"] else [])})


# ---------------------------------------------------------------------------------------- training
def batches(data, batch, rng):
    starts = rng.integers(0, len(data) - CONTEXT - 1, size=batch)
    x = np.stack([data[s:s + CONTEXT + 1] for s in starts])
    return torch.from_numpy(x[:, :-1]), torch.from_numpy(x[:, 1:])


@torch.no_grad()
def held_out_loss(model, data, exits, windows=24):
    """Mean cross-entropy (nats per character) over `windows` evenly spaced windows of a held-out text."""
    starts = np.linspace(0, len(data) - CONTEXT - 1, windows).astype(int)
    x = torch.from_numpy(np.stack([data[s:s + CONTEXT + 1] for s in starts]))
    out = model(x[:, :-1], exits)
    return {e: F.cross_entropy(out[e].reshape(-1, V), x[:, 1:].reshape(-1)).item() for e in exits}


def train(cfg, data, held, steps, batch, lr, exit_weight, log_every, teacher=None, checkpoint=None,
          save_every=100, stop_after=None):
    """Next-character cross-entropy; with a `teacher`, cross-entropy against the teacher's whole
    next-character distribution instead (distillation: the draft learns to say what the target says).

    With `checkpoint` (a path), the model, the optimiser, both random generators, the curve and the time
    so far are saved every `save_every` steps and when the run stops, and a run that finds the file
    resumes after its last step: the resumed run does the same arithmetic as one that never stopped.
    `stop_after` stops this run after that many steps (a timed trial, or a machine shared by day).
    Returns (model, curve, seconds, the last step done)."""
    torch.manual_seed(cfg["seed"])
    rng = np.random.default_rng(cfg["seed"])
    model = GPT(**cfg)
    exits = exits_of(cfg)
    decay = [p for p in model.parameters() if p.dim() == 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=lr, betas=(0.9, 0.99))
    warm = max(1, steps // 20)
    curve, smooth, first, before = [], None, 1, 0.0
    if checkpoint is not None and Path(checkpoint).exists():
        state = torch.load(checkpoint, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        curve, smooth, first, before = state["curve"], state["smooth"], state["step"] + 1, state["seconds"]
        print(f"resuming {checkpoint} after step {state['step']}", flush=True)

    def save(step):
        if checkpoint is not None:
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "rng": rng.bit_generator.state,
                        "torch_rng": torch.get_rng_state(), "curve": curve, "smooth": smooth, "step": step,
                        "seconds": before + time.time() - t0}, checkpoint)

    t0 = time.time()
    last = min(steps, first - 1 + stop_after) if stop_after else steps
    for step in range(first, last + 1):
        for g in opt.param_groups:  # linear warm-up, then cosine to a tenth
            g["lr"] = lr * (step / warm if step <= warm else 0.1 + 0.45 * (1 + math.cos(math.pi * (step - warm) / (steps - warm))))
        x, y = batches(data, batch, rng)
        out = model(x, exits)
        if teacher is not None:
            with torch.no_grad():
                soft = F.softmax(teacher(x, [teacher.n_layer])[teacher.n_layer], dim=-1).reshape(-1, V)
            losses = {e: F.cross_entropy(out[e].reshape(-1, V), soft) for e in exits}
        else:
            losses = {e: F.cross_entropy(out[e].reshape(-1, V), y.reshape(-1)) for e in exits}
        loss = losses[cfg["n_layer"]] + sum(exit_weight * loss_e for e, loss_e in losses.items() if e != cfg["n_layer"])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        final = losses[cfg["n_layer"]].item()
        smooth = final if smooth is None else 0.95 * smooth + 0.05 * final
        if step % log_every == 0 or step == steps:
            model.eval()
            point = {"step": step, "seconds": round(before + time.time() - t0, 1), "train": round(smooth, 4)}
            for name, text in held.items():
                for e, v in held_out_loss(model, text, exits).items():
                    point[f"{name}@{e}"] = round(v, 4)
            model.train()
            curve.append(point)
            print(json.dumps(point), flush=True)
        if step % save_every == 0:
            save(step)
    save(last)
    return model.eval(), curve, before + time.time() - t0, last


# ---------------------------------------------------------------------------------------- export
def to_arrays(model, cfg):
    """The weights as the NumPy forward wants them: x @ W (W is in x out), fp16."""
    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    out = {"wte": sd["wte.weight"], "wpe": sd["wpe.weight"], "ln_f.g": sd["ln_f.weight"],
           "ln_f.b": sd["ln_f.bias"], "head": sd["head.weight"].T}
    for i in range(cfg["n_layer"]):
        p = f"blocks.{i}."
        for ours, theirs in (("ln1", "ln1"), ("ln2", "ln2")):
            out[f"h{i}.{ours}.g"], out[f"h{i}.{ours}.b"] = sd[p + theirs + ".weight"], sd[p + theirs + ".bias"]
        for ours in ("qkv", "proj", "fc", "out"):
            out[f"h{i}.{ours}.w"], out[f"h{i}.{ours}.b"] = sd[p + ours + ".weight"].T, sd[p + ours + ".bias"]
    return {k: np.ascontiguousarray(v).astype(np.float16) for k, v in out.items()}


def load_arrays(model, cfg, arrays):
    """Put fp16-rounded weights back into the torch model, so its reference logits are those of the
    weights the course ships."""
    f = {k: torch.from_numpy(v.astype(np.float32)) for k, v in arrays.items()}
    sd = {"wte.weight": f["wte"], "wpe.weight": f["wpe"], "ln_f.weight": f["ln_f.g"], "ln_f.bias": f["ln_f.b"],
          "head.weight": f["head"].T}
    for i in range(cfg["n_layer"]):
        p = f"blocks.{i}."
        for n in ("ln1", "ln2"):
            sd[p + n + ".weight"], sd[p + n + ".bias"] = f[f"h{i}.{n}.g"], f[f"h{i}.{n}.b"]
        for n in ("qkv", "proj", "fc", "out"):
            sd[p + n + ".weight"], sd[p + n + ".bias"] = f[f"h{i}.{n}.w"].T, f[f"h{i}.{n}.b"]
    model.load_state_dict({k: v.contiguous() for k, v in sd.items()})
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jargon", required=True, help="jargon.txt.gz from Debian's jargon-text 4.4.7")
    ap.add_argument("--stdlib", required=True, help="the Python 3.11 standard library folder")
    ap.add_argument("--size", choices=sorted(SIZES), default="tiny", help="tiny: the shipped models; large: see the docstring")
    ap.add_argument("--target-steps", type=int, help="default: the size's")
    ap.add_argument("--draft-steps", type=int, help="default: the size's")
    ap.add_argument("--batch", type=int, help="default: the size's")
    ap.add_argument("--threads", type=int, default=1, help="PyTorch threads (the shipped models: 1)")
    ap.add_argument("--checkpoints", help="a folder: save every --save-every steps there, and resume from it")
    ap.add_argument("--save-every", type=int, default=100)
    ap.add_argument("--stop-after", type=int, help="stop after this many steps of the model in training "
                    "(checkpoint saved); run again with the same arguments to go on")
    ap.add_argument("--reuse-target", action="store_true",
                    help="load tiny_target.npz and its record from --out instead of training it (to rebuild the draft)")
    ap.add_argument("--out", default=str(HERE))
    args = ap.parse_args()
    size = SIZES[args.size]
    target_steps = args.target_steps or size["target_steps"]
    draft_steps = args.draft_steps or size["draft_steps"]
    batch = args.batch or size["batch"]
    torch.set_num_threads(args.threads)

    corpus, code_chars, prose_chars, code_files = training_corpus(args.jargon, args.stdlib)
    data = encode(corpus)
    held = {"code": encode((CORPORA / "code_stdlib.txt").read_text()),
            "prose": encode((CORPORA / "prose_jargon.txt").read_text())}
    print(f"corpus: {code_chars:,} code + {prose_chars:,} prose characters", flush=True)

    out = Path(args.out)
    ckpt = Path(args.checkpoints) if args.checkpoints else None
    if ckpt:
        ckpt.mkdir(parents=True, exist_ok=True)
    record = {"torch": torch.__version__, "numpy": np.__version__, "threads": torch.get_num_threads(),
              "vocab": V, "context": CONTEXT, "batch": batch, "size": args.size,
              "corpus": {"characters": len(corpus), "code_characters": code_chars, "prose_characters": prose_chars,
                         "sha256": hashlib.sha256(corpus.encode()).hexdigest(), "stdlib_files": code_files,
                         "jargon_lines": JARGON_TRAIN},
              "held_out": {"code": "data/corpora/code_stdlib.txt", "prose": "data/corpora/prose_jargon.txt"},
              "prompt": PROMPT, "models": {}}
    refs, teacher = {}, None
    for name, cfg, steps, lr, exit_weight in (("target", size["target"], target_steps, 3e-3, 0.5),
                                              ("draft", size["draft"], draft_steps, 4e-3, 0.0)):
        if name == "target" and args.reuse_target:
            with np.load(out / "tiny_target.npz") as z:
                arrays = {k: z[k] for k in z.files}
            record["models"]["target"] = json.loads((out / "tiny_models.json").read_text())["models"]["target"]
        else:
            print(f"training {name}: {cfg}, {steps} steps" + (" (distilled from the target)" if teacher else ""), flush=True)
            model, curve, seconds, done = train(
                cfg, data, held, steps, batch, lr, exit_weight, log_every=max(1, steps // 25), teacher=teacher,
                checkpoint=ckpt / f"{args.size}_{name}.pt" if ckpt else None, save_every=args.save_every,
                stop_after=args.stop_after)
            if done < steps:
                print(f"stopped: {name} at step {done} of {steps}, {seconds:.1f} s of training so far "
                      f"({seconds / done:.1f} s per step); run again to resume", flush=True)
                return
            arrays = to_arrays(model, cfg)
            np.savez(out / f"tiny_{name}.npz", **arrays)
            record["models"][name] = {**cfg, "exits": exits_of(cfg), "steps": steps, "lr": lr,
                                      "exit_loss_weight": exit_weight, "distilled_from": "target" if teacher else None,
                                      "train_seconds": round(seconds, 1),
                                      "parameters": int(sum(a.size for a in arrays.values())), "curve": curve}
        model = load_arrays(GPT(**cfg), cfg, arrays).eval()   # the fp16-rounded weights the course ships
        with torch.no_grad():
            logits = model(torch.from_numpy(encode(PROMPT))[None], exits_of(cfg))
        for e, v in logits.items():
            refs[f"{name}@{e}"] = v[0].numpy().astype(np.float32)
        if name == "target":
            teacher = model   # the draft is distilled from the shipped target
    np.savez(out / "tiny_reference.npz", prompt=encode(PROMPT), **refs)
    (out / "tiny_models.json").write_text(json.dumps(record, indent=1) + "\n")
    print("wrote", ", ".join(f"tiny_{n}.npz" for n in ("target", "draft", "reference")), "tiny_models.json;",
          "now run corpus.py --write to record the n-gram baselines beside them")


if __name__ == "__main__":
    main()
