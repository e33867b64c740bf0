"""Rounds run many times: vectorised simulation and the sweeps of 04-06, speculative generation over text (08)
with its stored runs, and the KV-cache loop of a real Llama with rollback and prompt lookup (10)."""
