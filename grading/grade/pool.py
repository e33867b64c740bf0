"""The worker pool: pebble's ProcessPool, one worker per core, each grading submission after submission.

`schedule(job, timeout=limit)` kills the worker of a submission that runs past its limit and starts a
fresh one for the next (pebble does that); the submission's kernel, a process group of its own, is
killed with it. Workers are forked from a fork server that imported nbgrader once, so a worker, first or
replacement, starts in a fraction of a second; the start-up is never counted in a submission's limit.
"""
import multiprocessing
import os
import signal
import warnings
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from pebble import ProcessExpired, ProcessPool

# A worker's environment, which its kernels inherit: numerical libraries single-threaded (one worker per
# core), figures drawn by matplotlib's inline backend, as in JupyterLab: each figure a cell draws is an
# image/png output, kept in the autograded notebook and shown on the feedback page (within kernels/outputs.py's caps).
INLINE = "module://matplotlib_inline.backend_inline"
WORKER_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": INLINE}

_config = _function = None


def _init_worker(config, env, log_dir, function):
    """In each new worker: its environment, and its output (and its kernels') into a log file of its own."""
    global _config, _function
    os.environ.update(env)
    log = os.open(Path(log_dir) / f"worker-{os.getpid()}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    warnings.filterwarnings("ignore", message=".*not in session.*")  # nbgrader's harmless SAWarning
    _config, _function = config, function


def _grade(job):
    if _function is not None:
        return _function(job, _config)
    from .run import grade_submission

    return grade_submission(job, _config)


class Pool:
    """Grade jobs in `workers` processes; `results()` yields (job, Result or exception) as they finish.
    Each job runs `function(job, config)` (default: run.grade_submission; a test passes a stub)."""

    def __init__(self, workers, config, log_dir, env=None, function=None):
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["grading.grade.run"])
        env = {**WORKER_ENV, **(env or {})}
        self.log_dir = Path(log_dir)
        self.pool = ProcessPool(max_workers=workers, initializer=_init_worker,
                                initargs=(config, env, str(log_dir), function), context=context)
        self.futures = {}

    def last_words(self):
        """The last line any worker wrote to its log (why one crashed, usually)."""
        logs = sorted(self.log_dir.glob("worker-*.log"), key=lambda p: p.stat().st_mtime)
        for log in reversed(logs):
            lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
            if lines:
                return lines[-1][:200]
        return "?"

    def schedule(self, job, timeout):
        self.futures[self.pool.schedule(_grade, args=(job,), timeout=timeout)] = job

    def results(self):
        """(job, outcome) in the order they finish; outcome is a Result, or the exception: FutureTimeout
        (past the limit), ProcessExpired (the worker died) or another (a bug in the grader)."""
        from concurrent.futures import as_completed

        for future in as_completed(list(self.futures)):
            job = self.futures.pop(future)
            try:
                outcome = future.result()
            except BaseException as e:  # every outcome is reported, none stops the class
                if isinstance(e, (KeyboardInterrupt, SystemExit)):
                    raise
                outcome = e
                if isinstance(e, FutureTimeout):
                    kill_kernel(job.scratch)
            yield job, outcome

    def close(self):
        self.pool.close()
        self.pool.join()

    def stop(self):
        self.pool.stop()
        self.pool.join()
        for job in self.futures.values():
            kill_kernel(job.scratch)

    def failure(self, outcome, limit):
        """Why a submission has no result, in words."""
        if isinstance(outcome, FutureTimeout):
            return f"grading took longer than {limit:g} s and was stopped"
        if isinstance(outcome, ProcessExpired):
            code = outcome.exitcode
            how = f"killed by signal {-code}" if code and code < 0 else f"exit code {code}"
            return f"the grading process crashed ({how}): {self.last_words()}"
        return f"the grader failed: {type(outcome).__name__}: {outcome}"


def kill_kernel(scratch):
    """Kill the process group of the kernel the worker grading in `scratch` started (it would exit on its
    own within a second of losing its worker, but a kernel stuck in C code might not)."""
    try:
        pid = int((Path(scratch) / "kernel.pid").read_text())
        os.killpg(pid, signal.SIGKILL)
    except (OSError, ValueError):
        pass


