"""Wall and CPU seconds of a command's whole process tree: python -m devtools.treecpu OUT.json CMD ARGS...

A test run's kernels do not all stay its children: the sandbox's and the grader's fork server's leave the tree,
so neither the worker's rusage nor SPECLAB_TIMELINE's tree_cpu counts them. Here the command runs under a child
subreaper (Linux prctl): every orphan in its tree is re-parented to this process and reaped by it, so
RUSAGE_CHILDREN at the end holds the CPU time of everything the command started. How README's notebook 10
figures ("What a run costs") were taken, a slice of tests side by side with the same slice of an older tree.
"""
import ctypes
import json
import os
import resource
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def run(argv):
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    start = time.time()
    pid = os.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    rc = None
    while True:
        try:
            done, status = os.waitpid(-1, 0)  # the command, or an orphan of its tree
        except ChildProcessError:
            break  # nothing of the tree is left
        if done == pid:
            rc = os.waitstatus_to_exitcode(status)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"rc": rc, "wall": round(time.time() - start, 1), "cpu": round(usage.ru_utime + usage.ru_stime, 1)}


if __name__ == "__main__":
    result = run(sys.argv[2:])
    with open(sys.argv[1], "w") as f:
        f.write(json.dumps(result) + "\n")
    print(result)
    sys.exit(result["rc"] or 0)
