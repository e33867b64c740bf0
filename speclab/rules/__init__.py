"""speclab.rules: sampling, speculative, exact, candidates, trees, streaks."""
