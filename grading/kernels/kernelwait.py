"""Waits for kernel messages that a lost ZeroMQ wake-up cannot stretch to the time limit.

jupyter_client's asyncio channel waits for a message with a single `socket.poll(timeout)`
(`AsyncZMQSocketChannel.get_msg`). pyzmq's asyncio sockets learn that a message has arrived from
the socket's ZMQ_FD, which is edge-triggered: it signals once, when libzmq hands the socket a
command, and anything that makes libzmq process the socket's commands clears it. If the signal is
lost, the poll sleeps until its timeout although the message is already there (pyzmq #1558 and
#2173; nbclient #312 and PR #311 for the same hang in notebook execution). The execution then
passes, one time limit late: 60 s for nbgrader's cells, 300 s for grading/kernels/execute.py.

How we know it is that, and not the kernel (issue 25, measured on 2 cores under load): 6 of 143
executions of the course's notebooks stalled with jupyter_client's wait, 0 of 107 with this one.
In each stall we timed, the execute_reply and the cell's IOPub messages carried the kernel's send
time 59.2-59.6 s (18.9 s at a 20 s limit) before the client took them: the kernel had answered at
once. A watchdog in the client's event loop ran every 0.5 s
throughout (longest gap 0.54 s: the loop was not blocked), and found the shell socket's ZMQ_FD not
readable at every look, with its reader registered in that loop: the wake-up never came. At the
timeout pyzmq's own zmq_poll(0), which reads the socket's state rather than its FD, found the reply.

The fix here: wait in slices of at most SLICE seconds. A new slice registers a new poll, and pyzmq
reads ZMQ_EVENTS when it registers one, so a message whose wake-up was lost is found at the next
slice, not at the deadline. A poll never takes a message off the socket, so nothing that arrives
between slices is lost; the caller's overall timeout is kept exactly. When a slice runs its full
length and then finds a message waiting, that was a lost wake-up: it is counted in LOST_WAKEUPS.

Every path that executes a notebook calls install(): grading/kernels/execute.py (the tests' `executed`,
make bench), grading/grade/run.py (make grade and make check, in their worker processes), and
grading/nbgrader_config.py (nbgrader run by hand, the formgrader, and Validate in JupyterLab, which
loads that config in the server process). Remove them when jupyter_client's get_msg re-polls by itself.
"""
import time
from queue import Empty

from jupyter_client.channels import AsyncZMQSocketChannel

SLICE = 0.25          # seconds: the longest a lost wake-up can now delay a message
LOST_WAKEUPS = []     # for each lost wake-up, the slice it cost (seconds): the bench counts them


async def get_msg(self, timeout=None):
    """AsyncZMQSocketChannel.get_msg with the same meaning (Empty after `timeout` seconds, None: wait
    for ever), waiting in slices."""
    assert self.socket is not None
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = SLICE if deadline is None else max(0.0, deadline - time.monotonic())
        wait = min(SLICE, left)
        started = time.monotonic()
        if await self.socket.poll(int(wait * 1000)):
            if wait > 0 and time.monotonic() - started >= wait:
                LOST_WAKEUPS.append(wait)
            return await self._recv()
        if deadline is not None and time.monotonic() >= deadline:
            raise Empty


def install():
    """Replace jupyter_client's asyncio get_msg (idempotent; the original stays as `original_get_msg`)."""
    if AsyncZMQSocketChannel.get_msg is not get_msg:
        AsyncZMQSocketChannel.original_get_msg = AsyncZMQSocketChannel.get_msg
        AsyncZMQSocketChannel.get_msg = get_msg

