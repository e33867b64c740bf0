"""speclab.decoding: simulate, sweeps, textspec, specloop, realruns."""
