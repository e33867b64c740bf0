"""One core for the judge and its kernel while a test cell is judged.

A test cell is a conversation: the judge sends a call, waits; the kernel's agent runs it, answers, waits; one side
runs at a time, hundreds of times a cell (09's candidate samplers: ~700 calls a cell). On two cores each turn
wakes the other core (in a virtual machine, an interrupt between processors and an exit to the host): measured
here, 0.15 ms a trivial call with the two on different cores, 0.115 ms on one, and a third less CPU on each side
(its caches stay warm). So for the cell's time the judge's thread stays on the core it runs on, and asks the
agent to move there (agent.serve(cpu)); both go back to the cores they had once the cell is over. A grading
worker's kernel runs single-threaded (grading/grade/pool.py WORKER_ENV), and what runs alone (the kernel's own
cells, a second worker) is never held to a core.
"""
import os


def current_cpu():
    """The core this thread runs on now (/proc's "processor" field), or None."""
    try:
        with open("/proc/thread-self/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return None


class OneCore:
    """pin(): this thread held to the core it runs on (the core, the same until unpin(); None where there is no
    choice to make or it cannot be made); unpin(): back to the cores it had."""

    def __init__(self):
        self.saved = self.cpu = None

    def pin(self):
        if self.saved is not None:
            return self.cpu
        try:
            mask = os.sched_getaffinity(0)
            cpu = current_cpu()
            if len(mask) < 2 or cpu not in mask:
                return None
            os.sched_setaffinity(0, {cpu})
        except OSError:
            return None
        self.saved, self.cpu = mask, cpu
        return cpu

    def unpin(self):
        if self.saved is not None:
            try:
                os.sched_setaffinity(0, self.saved)
            except OSError:
                pass
            self.saved = self.cpu = None
