"""speclab.plumbing: checks, isolate, pending, datafiles, fastagg, labels."""
