"""A sandboxed kernel's processes seen from the host, through /proc: who is below whom, how many tasks a user
has, and the CPU time a process used (grading/kernels/sandbox.py reads them; nothing here starts anything)."""
import os
from pathlib import Path


def user_tasks(uid):
    """How many processes and threads user `uid` has now (what Linux counts against RLIMIT_NPROC)."""
    count = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            if int(fields.get("Uid", "-1 ").split()[0]) == uid:
                count += int(fields.get("Threads", "1"))
    return count


def descendant(pid, depth=2):
    """The process `depth` generations below `pid` along first children (bwrap -> its reaper -> the kernel)."""
    for _ in range(depth):
        kids = []
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                kids += Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        except OSError:
            return None
        if not kids:
            return None
        pid = int(kids[0])
    return pid


def process_cpu(pid):
    """CPU seconds of a process and of its children it has reaped (utime, stime, cutime, cstime), or 0."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0
