"""What drafts and what verifies: the six-letter tokens and their 6x6 tables, character n-grams and Kneser-Ney,
SmolLM2-135M in NumPy (smollm/) and the tiny random Llama the graded tests hand exercises (tinyllama)."""
