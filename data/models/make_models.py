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

One thread (torch.set_num_threads(1)); a fixed number of steps, so a rerun does the same arithmetic
(bit-identical results need the same PyTorch build and CPU). The shipped files took about 40 minutes
for the target and 5 for the draft, on a 2-core machine shared with other jobs, at nice 10
(tiny_models.json records the times); an idle core needs less. The draft is distilled from the
fp16-rounded target; `--reuse-target` rebuilds only the draft from an existing tiny_target.npz.
"""
import argparse
import gzip
import hashlib
import json
import math
import re
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
CORPORA = HERE.parent / "corpora"
sys.path.insert(0, str(CORPORA))
from make_corpora import STDLIB_FILES, ascii_only  # noqa: E402  (08's rules, reused)

V = 128
CONTEXT = 128          # positions the models know; the course's cache is this long
CODE_CHARS = 1_500_000  # stdlib modules in name order until at least this many characters
# Jargon File lines used for training (1-based, end exclusive): the glossary and lexicon, which
# notebook 08 left out. 08's sections (JARGON_SECTIONS) stay held out.
JARGON_TRAIN = [(2115, 40101)]

TARGET = dict(n_layer=4, d=192, n_head=3, exit_layer=1, seed=1)
DRAFT = dict(n_layer=1, d=96, n_head=2, exit_layer=None, seed=2)
PROMPT = 'def _format_usage(self, usage, actions, groups, prefix):\n    """'  # reference logits


# ---------------------------------------------------------------------------------------- corpus
def training_code(stdlib):
    held = set(STDLIB_FILES)
    names, parts, total = [], [], 0
    for path in sorted(Path(stdlib).glob("*.py")):
        if path.name in held:
            continue
        text = path.read_text(encoding="utf-8")
        if not text.isascii():
            continue
        names.append(path.name)
        parts.append(text.expandtabs(8))
        total += len(parts[-1])
        if total >= CODE_CHARS:
            break
    return "".join(parts), names


def training_prose(jargon_gz):
    lines = gzip.open(jargon_gz, "rt", encoding="utf-8").read().split("\n")
    paragraphs = []
    for start, end in JARGON_TRAIN:
        block = "\n".join(lines[start - 1:end - 1])
        for para in re.split(r"\n\s*\n", block):
            if any("\u2500" <= ch <= "\u257f" for ch in para):
                continue
            words = " ".join(para.split())
            if words:
                paragraphs.append(ascii_only(words))
    return "\n\n".join(paragraphs) + "\n"


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


def train(cfg, data, held, steps, batch, lr, exit_weight, log_every, teacher=None):
    """Next-character cross-entropy; with a `teacher`, cross-entropy against the teacher's whole
    next-character distribution instead (distillation: the draft learns to say what the target says)."""
    torch.manual_seed(cfg["seed"])
    rng = np.random.default_rng(cfg["seed"])
    model = GPT(**cfg)
    exits = exits_of(cfg)
    decay = [p for p in model.parameters() if p.dim() == 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=lr, betas=(0.9, 0.99))
    warm = max(1, steps // 20)
    curve, t0, smooth = [], time.time(), None
    for step in range(1, steps + 1):
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
            point = {"step": step, "seconds": round(time.time() - t0, 1), "train": round(smooth, 4)}
            for name, text in held.items():
                for e, v in held_out_loss(model, text, exits).items():
                    point[f"{name}@{e}"] = round(v, 4)
            model.train()
            curve.append(point)
            print(json.dumps(point), flush=True)
    return model.eval(), curve, time.time() - t0


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
    ap.add_argument("--target-steps", type=int, default=500)
    ap.add_argument("--draft-steps", type=int, default=300)
    ap.add_argument("--reuse-target", action="store_true",
                    help="load tiny_target.npz and its record from --out instead of training it (to rebuild the draft)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--out", default=str(HERE))
    args = ap.parse_args()
    torch.set_num_threads(1)

    code, code_files = training_code(args.stdlib)
    prose = training_prose(args.jargon)
    corpus = code + "\n\n" + prose
    data = encode(corpus)
    held = {"code": encode((CORPORA / "code_stdlib.txt").read_text()),
            "prose": encode((CORPORA / "prose_jargon.txt").read_text())}
    print(f"corpus: {len(code):,} code + {len(prose):,} prose characters", flush=True)

    out = Path(args.out)
    record = {"torch": torch.__version__, "numpy": np.__version__, "threads": torch.get_num_threads(),
              "vocab": V, "context": CONTEXT, "batch": args.batch,
              "corpus": {"characters": len(corpus), "code_characters": len(code), "prose_characters": len(prose),
                         "sha256": hashlib.sha256(corpus.encode()).hexdigest(), "stdlib_files": code_files,
                         "jargon_lines": JARGON_TRAIN},
              "held_out": {"code": "data/corpora/code_stdlib.txt", "prose": "data/corpora/prose_jargon.txt"},
              "prompt": PROMPT, "models": {}}
    refs, teacher = {}, None
    for name, cfg, steps, lr, exit_weight in (("target", TARGET, args.target_steps, 3e-3, 0.5),
                                              ("draft", DRAFT, args.draft_steps, 4e-3, 0.0)):
        if name == "target" and args.reuse_target:
            with np.load(out / "tiny_target.npz") as z:
                arrays = {k: z[k] for k in z.files}
            record["models"]["target"] = json.loads((out / "tiny_models.json").read_text())["models"]["target"]
        else:
            print(f"training {name}: {cfg}, {steps} steps" + (" (distilled from the target)" if teacher else ""), flush=True)
            model, curve, seconds = train(cfg, data, held, steps, args.batch, lr, exit_weight,
                                          log_every=max(1, steps // 25), teacher=teacher)
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
    print("wrote", ", ".join(f"tiny_{n}.npz" for n in ("target", "draft", "reference")), "tiny_models.json")


if __name__ == "__main__":
    main()
