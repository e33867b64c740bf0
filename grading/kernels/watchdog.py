"""Limits for a whole sandbox, all its processes together: a thread of the grader's, outside the sandbox, that
watches every process of one sandboxed kernel's process namespace.

The limits set inside the sandbox (grading/kernels/sandbox.py) are per process: an address space per process
(RLIMIT_AS), CPU seconds per process (RLIMIT_CPU). A submission that forks six children of 1 GiB each held
6.5 GiB against a 4 GiB limit, and 32 busy children, each in a session of its own (setsid: with the
scheduler's autogroups each session weighs as much as a whole grading worker), made classmates graded
beside it take 50-59 s instead of 7-11 s. Control groups would bound the whole sandbox, but on these
machines the host's service manager owns them (toolchain-notes.md: never create or write them). So,
every TICK seconds, this thread walks the sandbox's process tree (from bwrap's reaper, the namespace's
init: an orphan is re-parented to it, so no process of the namespace leaves the tree) and:

- memory: sums what its processes hold (proportional set size, so pages a fork shares are counted
  once); past the budget (the grader's memory limit), every process but the kernel is killed;
- processes: counts its processes and threads; past the cap, the same (RLIMIT_NPROC already stops a
  fork where Linux counts per sandbox: a root grader gives each kernel a user of its own, and since
  Linux 5.14 a user namespace has counts of its own; this is the second line);
- CPU: a process the submission started gets nice 19, and so does the autogroup of one that left the
  kernel's session; and if the sandbox's processes together use more than SHARE cores (one worker
  per core: one core is a submission's fair share) for more than BURST CPU seconds ahead, all of them
  are paused (SIGSTOP) until the average is back at the share (SIGCONT): a bandwidth limit, in the
  grader. The total stays bounded by the share times the submission's time limit.

What it does is recorded (EVENTS, SANDBOXES) for the grading notes and `make bench`. What it cannot do:
act between two ticks (memory can grow past the budget for up to TICK seconds at the rate the machine
allows), and count the CPU of a process that is born and reaped between two ticks (it is bounded by
the process cap and by the nice of what the submission starts).
"""
import json
import os
import signal
import threading
import time
from pathlib import Path

TICK = 0.1     # seconds between two looks at the sandbox
SHARE = 1.0    # cores a submission's processes may use together, on average
BURST = 1.0    # CPU seconds a sandbox may run ahead of its share before it is paused
PAUSE_MAX = 1.0  # seconds of one pause (then it looks again)
NICE = 19      # for the processes a submission starts (its kernel keeps 0)
HZ = os.sysconf("SC_CLK_TCK")
# Read as each sandbox starts. SPECLAB_SANDBOX_WATCHDOG=watch: measure and record, never act (`make bench` compares
# with and without the limits); SPECLAB_SANDBOX_WATCHDOG_LOG=<file>: each sandbox's summary appended there as a
# line of JSON (for `make bench`, whose grading runs in worker processes).
MODE, LOG = "SPECLAB_SANDBOX_WATCHDOG", "SPECLAB_SANDBOX_WATCHDOG_LOG"

EVENTS = []     # (kind, text) for each limit a sandbox of this process reached: the grading notes
SANDBOXES = []  # one summary per sandbox this process watched (peaks, pauses): a small dict per kernel


def children(pid):
    """The processes `pid`'s threads started (that are still theirs)."""
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                kids += [int(k) for k in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
            except OSError:
                pass
    except OSError:
        pass
    return kids


def tree(root):
    """`root` and every process below it."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children(pid)
    return found


def stat(pid):
    """(CPU seconds of its own, threads, start time in ticks, session id) of a process, or None if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / HZ, int(fields[17]), int(fields[19]), int(fields[3])
    except (OSError, ValueError, IndexError):
        return None


def resident(pid, exact=False):
    """Bytes a process holds: resident set (cheap), or proportional set (a page shared by n processes
    counts 1/n: what a fork shares is counted once), or 0 if it is gone."""
    try:
        if not exact:
            return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def gib(n):
    return f"{n / (1 << 30):.3g} GiB"


class Watchdog:
    """Watches the sandbox whose namespace init is `reaper` and whose kernel is `kernel` (pids as the grader
    sees them). memory: bytes all its processes may hold together (0: no limit); tasks: processes and
    threads together (0: no cap); share: cores together on average (0: no limit)."""

    def __init__(self, reaper, kernel, memory=0, tasks=0, share=SHARE, tick=TICK, burst=BURST, mode=None):
        self.reaper, self.kernel = reaper, kernel
        self._born = (stat(reaper) or (0, 0, None, 0))[2]  # a reused pid is not the reaper
        self.memory, self.tasks, self.share, self.tick, self.burst = memory, tasks, share, tick, burst
        self.acts = (mode or os.environ.get(MODE, "on")) != "watch"
        self.peak_memory = self.peak_tasks = 0
        self.paused = 0.0          # seconds the sandbox was paused, in all
        self.killed = {}           # why -> processes killed
        self.cpu = 0.0             # CPU seconds its processes used while watched
        self._seen = {}            # (pid, start) -> CPU seconds at the last look
        self._niced, self._grouped = set(), set()
        self._debt, self._last, self._began = 0.0, None, time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"watchdog-{kernel}", daemon=True)

    def start(self):
        self._look(charge=False)  # what the kernel used to start is not held against it
        self._thread.start()
        return self

    def stop(self):
        """Stop watching (the sandbox is resumed if it was paused) and record the summary."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._signal(self._members(), signal.SIGCONT)
        apart = {pid for pid, _ in self._grouped}
        if apart:
            EVENTS.append(("sessions", f"{len(apart)} of its processes left its kernel's session (setsid), where the "
                                       "scheduler would have weighed each as much as a classmate's whole grading: "
                                       f"the grader ran them at the lowest priority (nice {NICE})"))
        SANDBOXES.append(self.summary())
        if os.environ.get(LOG):
            with open(os.environ[LOG], "a") as f:
                f.write(json.dumps(self.summary()) + "\n")

    def summary(self):
        return {"peak memory": self.peak_memory, "peak tasks": self.peak_tasks, "paused": self.paused,
                "cpu": self.cpu, "seconds": time.monotonic() - self._began, "killed": dict(self.killed),
                "apart": len({pid for pid, _ in self._grouped})}

    def _members(self):
        s = stat(self.reaper) if self.reaper else None
        return tree(self.reaper) if s and s[2] == self._born else []

    def _run(self):
        said = False
        while not self._stop.wait(self.tick):
            try:
                self._look()
            except Exception as e:  # never the grader's worker: say so once (in its log), keep watching
                if not said:
                    print(f"watchdog: {type(e).__name__}: {e}", flush=True)
                said = True

    def _look(self, charge=True):
        now = time.monotonic()
        pids = self._members()
        used, tasks, seen, session, sessions = 0.0, 0, {}, None, {}
        for pid in pids:
            s = stat(pid)
            if s is None:
                continue
            cpu, threads, start, sid = s
            seen[(pid, start)] = cpu
            used += max(0.0, cpu - self._seen.get((pid, start), 0.0 if charge else cpu))
            tasks += threads
            sessions[pid] = sid
            if pid == self.kernel:
                session = sid
        self._seen = seen
        self.peak_tasks = max(self.peak_tasks, tasks)
        memory = sum(resident(pid) for pid in pids)
        if self.memory and memory > self.memory:  # the resident sets count shared pages in each: look closer
            memory = sum(resident(pid, exact=True) for pid in pids)
        self.peak_memory = max(self.peak_memory, memory)
        if not charge:
            self._last = now
            return
        self.cpu += used
        if not self.acts:
            return
        others = [p for p in pids if p not in (self.reaper, self.kernel)]
        if self.memory and memory > self.memory and others:
            n = self._kill(others)
            self._event("memory", n, f"its processes held {gib(memory)} together, past the {gib(self.memory)} "
                                     f"the grader lets a submission use: the {{n}} process(es) it started beside its "
                                     "kernel were killed")
        elif self.tasks and tasks > self.tasks + 1 and others:  # + 1: the reaper
            n = self._kill(others)
            self._event("processes", n, f"it had {tasks} processes and threads, past the {self.tasks} the grader "
                                        "allows a submission: the {n} process(es) it started beside its kernel were "
                                        "killed")
        else:
            self._nice(others, {p: sid for p, sid in sessions.items() if sid != session})
        if self.share:
            elapsed, self._last = now - self._last, now
            self._debt = max(0.0, self._debt + used - self.share * elapsed)
            if self._debt > self.burst:
                self._pause(min(PAUSE_MAX, self._debt / self.share))

    def _event(self, kind, n, text):
        self.killed[kind] = self.killed.get(kind, 0) + n
        EVENTS.append((kind, text.format(n=n)))

    def _signal(self, pids, sig):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass

    def _freeze(self, keep=()):
        """SIGSTOP every process of the sandbox but `keep`, again until no new one appears (a stopped process
        cannot fork); returns those stopped."""
        stopped = set()
        for _ in range(50):
            new = [p for p in self._members() if p not in stopped and p not in keep]
            if not new:
                break
            self._signal(new, signal.SIGSTOP)
            stopped.update(new)
        return stopped

    def _kill(self, others):
        """Kill every process of the sandbox but its reaper and kernel; how many there were."""
        stopped = self._freeze(keep=(self.reaper, self.kernel))
        self._signal(stopped, signal.SIGKILL)
        return len(stopped) or len(others)

    def _pause(self, seconds):
        first = not self.paused
        stopped, start = self._freeze(), time.monotonic()
        self._stop.wait(seconds)  # or less: stop() ends a pause
        self._signal(self._members(), signal.SIGCONT)
        self._signal(stopped, signal.SIGCONT)
        self._last = time.monotonic()
        self.paused += self._last - start
        self._debt = max(0.0, self._debt - self.share * (self._last - start))
        if first:  # the first pause of this sandbox; notes() says for how long in all
            EVENTS.append(("cpu", f"its processes used more than {self.share:g} core(s) together: they were paused "
                                  "for {paused:.1f} s in all, so that the submissions graded beside it kept their "
                                  "share"))

    def _nice(self, pids, apart):
        """Nice 19 for what the submission starts, and for the autogroup of each that is in a session `apart`
        from the kernel's (the scheduler weighs an autogroup as much as a whole grading worker)."""
        for pid in pids:
            try:
                if pid not in self._niced:
                    self._niced.add(pid)
                    os.setpriority(os.PRIO_PROCESS, pid, NICE)
                if pid in apart and (pid, apart[pid]) not in self._grouped:
                    self._grouped.add((pid, apart[pid]))
                    Path(f"/proc/{pid}/autogroup").write_text(str(NICE))
            except OSError:
                pass


def notes(since=0, summaries_since=0):
    """The grading notes for the limits sandboxes reached since EVENTS[since] (one per kind), with the time
    paused since SANDBOXES[summaries_since]."""
    out, kinds = [], {}
    for kind, text in EVENTS[since:]:
        kinds.setdefault(kind, text)
    for kind in ("memory", "processes", "sessions"):
        if kind in kinds:
            out.append(kinds[kind])
    if "cpu" in kinds:
        out.append(kinds["cpu"].format(paused=paused(summaries_since)))
    return out


def paused(summaries_since=0):
    """Seconds the sandboxes since SANDBOXES[summaries_since] were paused, in all (Result.timings)."""
    return sum(s["paused"] for s in SANDBOXES[summaries_since:])
