"""Stalls: executions that sit idle until their time limit (issue 25), counted with jupyter_client's own
wait and with grading/kernels/kernelwait.py's, side by side in one run.

Each setting executes the course's source notebooks ROUNDS times, two executions at once (two worker
processes, as make grade and make test run them), through nbclient with the settings of
grading/kernels/execute.py but a cell time limit of LIMIT seconds, so that a stall costs LIMIT, not 300 s. The
settings alternate round by round (original, sliced, sliced, original, ...), so load drift costs both
alike. For every cell the execute_reply's timestamps say where its time went:
  kernel queue  from the request's send to the kernel starting it (reply metadata "started"): a
                request the kernel did not notice;
  client queue  from the kernel sending the reply (its header date) to the client taking it: a
                reply the client did not notice, which is the lost wake-up.
A stall is an execution over three times its notebook's median, or any single wait (either queue)
over IDLE seconds. Timestamps are the one machine's clock, so the two queues are comparable.

    python -m devtools.bench stalls                    # ROUNDS=2 (18 executions per setting)
    SPECLAB_STALL_ROUNDS=30 python -m devtools.bench stalls
    SPECLAB_STALL_ROUNDS=50 SPECLAB_STALL_SETTINGS=sliced python -m devtools.bench stalls   # the fix alone
    SPECLAB_STALL_LIMIT=120 ...   # a loaded machine: honest cells stay under the limit (a stall then costs 120 s)
    SPECLAB_STALL_NOTEBOOKS=01,02,03 ...   # only these notebooks (by number)
    SPECLAB_STALL_LOG=/tmp/stalls.jsonl ...  # also one JSON line per execution as it ends
"""
import json
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone

LIMIT = int(os.environ.get("SPECLAB_STALL_LIMIT", 30))  # seconds: the cell time limit here (a stall costs this)
IDLE = 5           # seconds: a longer wait in either queue is a stall
SETTINGS = ("original", "sliced")


def settings():
    chosen = tuple(os.environ.get("SPECLAB_STALL_SETTINGS", ",".join(SETTINGS)).split(","))
    unknown = set(chosen) - set(SETTINGS)
    if unknown:
        raise ValueError(f"SPECLAB_STALL_SETTINGS: unknown {sorted(unknown)}; choose from {SETTINGS}")
    return chosen


def rounds():
    return int(os.environ.get("SPECLAB_STALL_ROUNDS", "2"))


def _seconds(later, earlier):
    return (later - earlier).total_seconds()


def _as_datetime(stamp):
    from jupyter_client.session import extract_dates
    return extract_dates(stamp) if isinstance(stamp, str) else stamp


def execute_timed(path, setting):
    """Execute the notebook at `path` with jupyter_client's get_msg ("original") or kernelwait's
    ("sliced"); return (wall seconds, longest kernel queue, longest client queue, lost wake-ups seen)."""
    import nbformat
    from jupyter_client.channels import AsyncZMQSocketChannel
    from nbclient.exceptions import CellTimeoutError

    from grading.kernels import kernelwait
    from grading.kernels.execute import notebook_client
    kernelwait.install()
    AsyncZMQSocketChannel.get_msg = (kernelwait.get_msg if setting == "sliced"
                                     else AsyncZMQSocketChannel.original_get_msg)
    lost_before = len(kernelwait.LOST_WAKEUPS)
    queues = {"kernel": 0.0, "client": 0.0}

    def on_cell_executed(cell, cell_index, execute_reply):
        received = datetime.now(timezone.utc)
        sent = _as_datetime(execute_reply["parent_header"]["date"])
        replied = _as_datetime(execute_reply["header"]["date"])
        started = execute_reply.get("metadata", {}).get("started")
        if started is not None:
            queues["kernel"] = max(queues["kernel"], _seconds(_as_datetime(started), sent))
        queues["client"] = max(queues["client"], _seconds(received, replied))

    nb = nbformat.read(path, as_version=4)
    client = notebook_client(nb, os.path.dirname(path), timeout=LIMIT, allow_errors=True,
                             on_cell_executed=on_cell_executed)
    start = time.perf_counter()
    try:
        client.execute()
        timed_out = False
    except CellTimeoutError:  # on a loaded machine an honest cell can take the limit: count it, go on
        timed_out = True
    return (time.perf_counter() - start, queues["kernel"], queues["client"],
            len(kernelwait.LOST_WAKEUPS) - lost_before, timed_out)


def _worker_init():
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def run(n_rounds=None, notebooks=None):
    """{setting: [(notebook, wall, kernel queue, client queue, lost wake-ups, timed out)]}, the settings alternating."""
    from grading.course import assignments, source_notebook

    chosen_nbs = notebooks or [a for a in assignments()
                               if not os.environ.get("SPECLAB_STALL_NOTEBOOKS")
                               or a[:2] in os.environ["SPECLAB_STALL_NOTEBOOKS"].split(",")]
    paths = [str(source_notebook(aid)) for aid in chosen_nbs]
    log = os.environ.get("SPECLAB_STALL_LOG")  # one JSON line per execution, as it ends
    chosen = settings()
    results = {s: [] for s in chosen}
    with ProcessPoolExecutor(2, initializer=_worker_init) as pool:
        for r in range(n_rounds or rounds()):
            order = chosen if r % 2 == 0 else chosen[::-1]
            print(f"stalls: round {r + 1} of {n_rounds or rounds()}", file=sys.stderr, flush=True)
            for setting in order:
                for path, out in zip(paths, pool.map(execute_timed, paths, [setting] * len(paths))):
                    results[setting].append((os.path.basename(path), *out))
                    if log:
                        with open(log, "a") as f:
                            f.write(json.dumps([setting, *results[setting][-1]]) + "\n")
    return results


def stalls(rows):
    """The rows that stalled: over three times their notebook's median, or a queue over IDLE seconds."""
    by_nb = {}
    for row in rows:
        by_nb.setdefault(row[0], []).append(row[1])
    medians = {nb: statistics.median(walls) for nb, walls in by_nb.items()}
    return [row for row in rows if row[1] > 3 * medians[row[0]] or max(row[2], row[3]) > IDLE]


def bench():
    results = run()
    for setting, rows in results.items():
        stalled = stalls(rows)
        yield f"{setting}: executions, stalls", f"{len(rows)}, {len(stalled)}"
        yield (f"{setting}: longest wait in kernel / client queue",
               f"{max(r[2] for r in rows):.2f} s / {max(r[3] for r in rows):.2f} s")
        yield f"{setting}: lost wake-ups caught by a slice", f"{sum(r[4] for r in rows)}"
        yield f"{setting}: executions that hit the {LIMIT} s cell limit", f"{sum(r[5] for r in rows)}"
        for row in stalled:
            yield f"  stalled: {row[0]}", f"{row[1]:.1f} s (kernel {row[2]:.1f} s, client {row[3]:.1f} s)"
