"""The judge: hidden tests run in the grading worker, outside the sandboxed kernel (README: The judge)."""
