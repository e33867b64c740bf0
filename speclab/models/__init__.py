"""speclab.models: tokens, tables, ngram, kneserney, tinyllama, smollm."""
