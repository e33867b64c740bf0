"""The training corpus of notebook 10's models, rebuilt from its two sources (no PyTorch needed), and the
character n-gram baselines measured on it.

    python data/models/corpus.py --jargon jargon.txt.gz --stdlib STDLIB [--write]

prints the corpus's size and SHA-256 against tiny_models.json's record, then the cross-entropy (nats per
character) of Kneser-Ney character n-grams trained on it, on the held-out samples notebook 10 scores
(speclab.realspec.held_out), beside the shipped target and draft; --write stores them in
tiny_models.json under "baselines", where the notebook reads them (it cannot rebuild the corpus: that
needs the Jargon File package and Python 3.11.7's standard library, which the course does not ship).
make_models.py builds its training data with the same functions.
"""
import argparse
import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CORPORA = HERE.parent / "corpora"
sys.path.insert(0, str(CORPORA))
from make_corpora import STDLIB_FILES, ascii_only  # noqa: E402  (08's rules, reused)

CODE_CHARS = 1_500_000  # stdlib modules in name order until at least this many characters
# Jargon File lines used for training (1-based, end exclusive): the glossary and lexicon, which
# notebook 08 left out. 08's sections (JARGON_SECTIONS) stay held out.
JARGON_TRAIN = [(2115, 40101)]
ORDERS = (3, 5)          # the n-gram baselines: Kneser-Ney, character level
SAMPLE_CHARS = 2048      # held-out characters per text, as notebook 10 scores them (the first 64 give context)
KEEP = 64


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


def training_corpus(jargon_gz, stdlib):
    """(corpus text, code characters, prose characters, stdlib file names)."""
    code, names = training_code(stdlib)
    prose = training_prose(jargon_gz)
    return code + "\n\n" + prose, len(code), len(prose), names


def encode(text):
    return np.frombuffer(text.encode("ascii"), dtype=np.uint8).astype(np.int64)


def baselines(corpus):
    """{"kn3": {"code": nats, "prose": nats}, "kn5": ..., "target": ..., "draft": ...} on the held-out samples."""
    sys.path.insert(0, str(HERE.parent.parent))
    from speclab import realspec
    from speclab import transformer as tf
    samples = {t: realspec.held_out(t, SAMPLE_CHARS) for t in ("code", "prose")}
    data = encode(corpus)
    out = {}
    for order in ORDERS:
        kn = realspec.KneserNey(data, order)
        out[f"kn{order}"] = {t: round(kn.cross_entropy(s, first=KEEP), 4) for t, s in samples.items()}
    for name in ("target", "draft"):
        out[name] = {t: round(realspec.cross_entropy(tf.load(name), s, keep=KEEP), 4) for t, s in samples.items()}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jargon", required=True, help="jargon.txt.gz from Debian's jargon-text 4.4.7")
    ap.add_argument("--stdlib", required=True, help="the Python 3.11 standard library folder")
    ap.add_argument("--write", action="store_true", help="store the baselines in tiny_models.json")
    args = ap.parse_args()
    corpus, *_ = training_corpus(args.jargon, args.stdlib)
    record = json.loads((HERE / "tiny_models.json").read_text())
    sha = hashlib.sha256(corpus.encode()).hexdigest()
    same = sha == record["corpus"]["sha256"]
    print(f"corpus: {len(corpus):,} characters, sha256 {'matches' if same else 'DIFFERS from'} tiny_models.json")
    found = baselines(corpus)
    for name, row in found.items():
        print(f"{name:7} " + "  ".join(f"{t} {v:.3f}" for t, v in row.items()))
    if args.write:
        if not same:
            raise SystemExit("not written: this is not the corpus the models were trained on")
        record["baselines"] = {"sample_chars": SAMPLE_CHARS, "context_kept": KEEP,
                               "method": "interpolated Kneser-Ney (Chen & Goodman 1998), speclab.realspec.KneserNey",
                               "nats_per_character": found}
        (HERE / "tiny_models.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
