"""Out of the way: the graded tests' checks, an exercise graded alone (isolate), a cell waiting on one (pending),
where the data lives (datafiles), and the fast text drawing live widgets need (fastagg, labels)."""
