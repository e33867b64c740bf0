"""grading/kernels/kernelwait.py: a wait for a kernel message is not stretched to its time limit by a lost wake-up."""
import asyncio
from queue import Empty

import pytest
import zmq
import zmq.asyncio

from grading.kernels import kernelwait


class Clock:
    """A monotonic clock that only the fake socket moves."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class SleepySocket:
    """A socket whose poll always sleeps its whole timeout (every wake-up is lost) before it looks: the
    worst case of the edge-triggered ZMQ_FD. A message arrives at `arrival` (None: never)."""

    def __init__(self, clock, arrival):
        self.clock, self.arrival, self.polls = clock, arrival, []

    async def poll(self, timeout_ms):
        self.polls.append(timeout_ms)
        self.clock.now += timeout_ms / 1000
        return int(self.arrival is not None and self.clock.now >= self.arrival)


class Channel:
    """What get_msg needs of jupyter_client's AsyncZMQSocketChannel: a socket and _recv."""

    def __init__(self, socket):
        self.socket = socket

    async def _recv(self):
        return {"msg_type": "execute_reply"}


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(kernelwait.time, "monotonic", clock)
    return clock


@pytest.fixture
def wait(run_coroutine):
    return lambda get_msg, channel, timeout: run_coroutine(get_msg(channel, timeout))


def test_a_message_is_taken_one_slice_after_it_arrives_not_at_the_limit(clock, wait):
    channel = Channel(SleepySocket(clock, arrival=0.1))
    assert wait(kernelwait.get_msg, channel, 60) == {"msg_type": "execute_reply"}
    assert clock.now <= 0.1 + kernelwait.SLICE, f"the message waited until {clock.now} s"


def test_jupyter_clients_own_wait_holds_it_to_the_limit(clock, wait):
    """The defect the module works around, on the same fake socket: one poll for the whole timeout."""
    from jupyter_client.channels import AsyncZMQSocketChannel

    kernelwait.install()
    channel = Channel(SleepySocket(clock, arrival=0.1))
    wait(AsyncZMQSocketChannel.original_get_msg, channel, 60)
    assert clock.now == 60


def test_no_poll_is_longer_than_a_slice_and_the_timeout_is_kept_exactly(clock, wait):
    socket = SleepySocket(clock, arrival=None)
    with pytest.raises(Empty):
        wait(kernelwait.get_msg, Channel(socket), 1.1)
    assert max(socket.polls) <= kernelwait.SLICE * 1000
    assert clock.now == pytest.approx(1.1, abs=1e-3)


def test_without_a_timeout_it_waits_for_as_long_as_the_message_takes(clock, wait):
    socket = SleepySocket(clock, arrival=100.0)
    wait(kernelwait.get_msg, Channel(socket), None)
    assert 100.0 <= clock.now <= 100.0 + kernelwait.SLICE


def test_a_zero_timeout_looks_once(clock, wait):
    socket = SleepySocket(clock, arrival=None)
    with pytest.raises(Empty):
        wait(kernelwait.get_msg, Channel(socket), 0)
    assert socket.polls == [0]


def _lost_wakeup(run_coroutine, get_msg, poll_limit):
    """A real pyzmq pair: a message arrives while the receiver waits, and another user of the receiving
    socket reads ZMQ_EVENTS before the event loop runs (which clears the FD's edge: pyzmq #2173). Returns
    the message, or None if it was not taken within 3 s."""
    async def scenario():
        ctx = zmq.asyncio.Context()
        a, b = ctx.socket(zmq.PAIR), ctx.socket(zmq.PAIR)
        a.bind("inproc://kernelwait-test")
        b.connect("inproc://kernelwait-test")
        try:
            channel = Channel(a)

            async def recv():
                return await a.recv()
            channel._recv = recv
            waiting = asyncio.ensure_future(get_msg(channel, poll_limit))
            await asyncio.sleep(0.05)                  # the wait's poll is registered
            zmq.Socket.shadow(b.underlying).send(b"execute_reply")
            zmq.Socket.shadow(a.underlying).get(zmq.EVENTS)  # the edge is consumed here
            try:
                return await asyncio.wait_for(waiting, 3)
            except asyncio.TimeoutError:
                return None
        finally:
            a.close(linger=0)
            b.close(linger=0)
            ctx.term()
    return run_coroutine(scenario())


def test_a_real_lost_wakeup_is_recovered_at_the_next_slice(run_coroutine):
    assert _lost_wakeup(run_coroutine, kernelwait.get_msg, 60) == b"execute_reply"


def test_a_real_lost_wakeup_holds_jupyter_clients_wait(run_coroutine):
    """The same scenario with jupyter_client's get_msg: the message is there, the wait does not see it."""
    from jupyter_client.channels import AsyncZMQSocketChannel

    kernelwait.install()
    assert _lost_wakeup(run_coroutine, AsyncZMQSocketChannel.original_get_msg, 60) is None


def test_every_execution_path_installs_it():
    """The tests' and the bench's executions (grading.kernels.execute), make grade's and make check's workers
    (grading.grade.run), and everything that loads the nbgrader config: nbgrader by hand, the formgrader,
    Validate in JupyterLab's server. In a fresh interpreter, each path loaded for the first time after the
    original wait was put back."""
    import subprocess
    import sys

    check = """
from jupyter_client.channels import AsyncZMQSocketChannel as C
from grading.kernels import kernelwait
from grading.course import load_config
loads = {"grading.kernels.execute": lambda: __import__("grading.kernels.execute"),
         "grading.grade.run": lambda: __import__("grading.grade.run"),
         "the nbgrader config": load_config}
for name, load in loads.items():
    C.get_msg = C.__dict__.get("original_get_msg", C.get_msg)
    load()
    print(name, C.get_msg is kernelwait.get_msg)
"""
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:3] == ["grading.kernels.execute True", "grading.grade.run True", "the nbgrader config True"], out
