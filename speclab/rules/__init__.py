"""The rules and their exact distributions: sampling from p, the speculative round (verify_drafts) and the
reference answers of 01-04, exact enumeration of a round's outcomes, several candidates, token trees, streaks."""
