"""JudgeExecute: nbgrader's Execute step with the test cells run by the judge, outside the kernel.

The fresh sandboxed kernel runs every cell of the submission but the test cells (the student's own cells
too: what they do cannot reach the tests any more, and an honest helper keeps working), with RobustExecute's
restarts, memory limit and timeouts. Each test cell runs in the worker (judge.Judge); its outputs are written into the cell, so
nbgrader's SaveAutoGrades and GetGrades score it as before. Each call of a student's function may take a
cell timeout (then the kernel is interrupted, and restarted if it does not stop); the submission's own
limit (grading/grade/pool.py) bounds the whole.

The judge talks to its agent in the kernel over a Unix socket the agent listens on (in the sandbox's socket
folder, reached through the kernel's /proc root as its ZeroMQ sockets are): a line of JSON each way, read
without an event loop. Through Jupyter's stdin channel (input()) a call cost about 3 ms of wall time and
1.2 ms of the judge's CPU here (ipykernel flushes both output streams before each prompt, each message is
signed and goes through an event loop); over the socket, 0.4 ms and 0.2 ms (1,000 calls, load 4 to 6).
"""
import inspect
import os
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
import zmq
from jupyter_client.session import Session
from jupyter_core.utils import run_sync
from nbclient.util import run_hook
from traitlets import Bool, Unicode

from ..kernels import hidden
from ..kernels import sandbox as sandboxes
from ..cells import grade_id
from ..kernels.robust import RobustExecute
from ..kernels.timeline import mark
from . import agent, codec, registry, sync
from .colocate import OneCore
from .channel import STRAY_LINES, Channel
from .judge import Judge
from .outcome import STREAM_CAP, Dead, Late, Refused, _error, append_stream
from .slicing import is_test

# Notebooks graded the old way (tests in the kernel), with the reason: none now (08 and 10 were, until
# large dicts were held by the kernel and a test's own objects crossed by reference; grading/README.md).
OPT_OUT = {}

HIDE_REFERENCES = "SPECLAB_HIDE_REFERENCES"  # =0: the kernel keeps the graded notebook's references (to measure)
JUDGE_OPTED_OUT = "SPECLAB_JUDGE_OPTED_OUT"  # =1: judge these too (to measure them: devtools/benches/judge.py)

# the registry's text, the codec's, then sync's, run in one module (their imports of each other fail there)
CODEC = "\n".join(Path(m.__file__).read_text() for m in (registry, codec, sync))
AGENT = Path(agent.__file__).read_text()
BOOT = ("def __speclab_boot__(*sources):\n"
        "    import types\n"
        "    m = types.ModuleType('speclab_judge_agent')\n"
        "    for src in sources:  # the codec, then the agent, in one module\n"
        "        exec(compile(src, 'speclab_judge_agent', 'exec'), m.__dict__)\n"
        "    return m.install(globals())\n"
        f"__speclab_judge__ = __speclab_boot__({CODEC!r}, {AGENT!r})\n"
        "del __speclab_boot__\n")

class JudgeExecute(RobustExecute):
    judge = Bool(True, help="run the test cells in the grading worker (the judge), not in the kernel").tag(config=True)
    hide_references = Bool(os.environ.get(HIDE_REFERENCES) != "0", help="the kernel's speclab without the graded "
                           "notebook's references (grading/kernels/hidden.py); SPECLAB_HIDE_REFERENCES=0: off (devtools/benches "
                           "measures its cost)").tag(config=True)
    source = Unicode("", help="the assignment's source folder (solutions/<id>); empty: the course's "
                              "(CourseDirectory)").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._judge, self._serving, self._needs_restart, self._error = None, None, False, None
        self._interrupting, self._seq, self._socket_folder = False, 0, None
        self._channel = self._poller = self._iopub = self._unbuilt = None
        self._core = OneCore()  # the judge's thread and the agent on one core while a test cell is judged
        info = (resources or {}).get("nbgrader", {})
        path = self._source(info.get("assignment", "")) / f"{info.get('notebook', '')}.ipynb"
        opted_out = info.get("assignment") in OPT_OUT and os.environ.get(JUDGE_OPTED_OUT) != "1"
        names = []
        if self.judge and not opted_out and path.is_file():
            source = nbformat.read(path, as_version=4)
            mark("judge: source read")
            self._unbuilt = source  # the Judge is built while the kernel boots (async_start_new_kernel)
            names = self.hidden_names(info.get("assignment"), source)
        # the kernel's speclab lacks this notebook's references (grading/kernels/hidden.py); the judge keeps them
        self.config.SandboxedKernelManager.hidden = names
        self.config.SandboxedKernelManager.notebook = info.get("notebook", "")
        try:
            return super().preprocess(nb, resources, km)
        finally:
            self._close()
            if self._socket_folder:
                shutil.rmtree(self._socket_folder, ignore_errors=True)

    async def async_start_new_kernel(self, **kwargs):
        await super().async_start_new_kernel(**kwargs)
        self._build_judge()  # its slice of the source (ast, symtable) while the kernel process imports ipykernel

    start_new_kernel = run_sync(async_start_new_kernel)

    def _build_judge(self):
        if self._unbuilt is not None:
            self._judge, self._unbuilt = Judge(self._unbuilt, self._transport), None
            mark("judge: built")

    def hidden_names(self, aid, source):
        """The functions the kernel grading `aid` must not reach (its speclab's copies raise): the exercises of its
        source notebook `source`."""
        return hidden.exercise_names(source) if self.hide_references else []

    def _source(self, aid):
        """The assignment's source folder: `source`, or the course's (nbgrader's own paths, which name no scratch
        course: `nbgrader autograde` and the formgrader with the course's config, grading/nbgrader_steps.py)."""
        if self.source:
            return Path(self.source)
        from nbgrader.coursedir import CourseDirectory

        course = CourseDirectory(config=self.config)
        return Path(course.root) / course.source_directory / aid

    def preprocess_cell(self, cell, resources, index):
        self._build_judge()  # if no kernel was started here (a kernel manager handed in with its kernel running)
        j = self._judge
        if j is None or cell.cell_type != "code":
            return super().preprocess_cell(cell, resources, index)
        if is_test(cell):
            mark(f"cell {index} (test, judged)")
            self._skip.add(index)  # never run in the kernel, nor replayed after a restart
            run_sync(run_hook)(self.on_cell_start, cell=cell, cell_index=index)  # make check's progress line
            outputs = self._judge_cell(cell, index)
            for out in outputs:
                self._budget.admit(out)  # cut as the kernel's outputs are (RobustExecute.output)
            cell.outputs, cell.execution_count = outputs, None
            return cell, resources
        return super().preprocess_cell(cell, resources, index)

    def _judge_cell(self, cell, index):
        streams = []
        try:
            outputs = self._judge.run_test(grade_id(cell), cell.source)
        finally:
            if not self._needs_restart:
                try:
                    self._stop_serving(streams)
                except Late:
                    self._needs_restart = True
            self._core.unpin()
            if self._needs_restart:
                self._needs_restart = False
                self._restart_and_replay(index)
            else:
                self._drain_client()
        for name, text in streams:  # what the kernel printed outside an exercise's call (a thread, a C library)
            append_stream(outputs, name, text)
        if self._channel is not None:
            if self._channel.unrequested > STRAY_LINES:  # beyond a stopped call's last lines: written by the student
                outputs.append(_error("ProtocolError", f"the kernel sent {self._channel.unrequested:,} lines for no "
                                      "request of the grader's on its agent's socket; they were not read"))
            self._channel.unrequested = 0
        return outputs

    def _restart(self):
        self._close()
        super()._restart()

    # the kernel's side: an agent serving the judge over a Unix socket of its own, one execute_request per test cell
    def _transport(self, kind, body, on_callback):
        """Send one request to the agent; its answer (a dict, or None when none came), the kernel's prints
        [(stream name, text)] and the kernel's own error, if any. Raises Late past the cell's time."""
        self._deadline = time.monotonic() + (self.timeout or 60)  # each call may take a cell's time
        streams = []
        if self._channel is None:
            self._boot(streams)
        if self._serving is None:
            cpu = self._core.pin()
            self._serving = _settled(self.kc.execute(f"__speclab_judge__.serve({cpu!r})", silent=False,
                                                     store_history=False, allow_stdin=False, stop_on_error=False))
            self._error = None
        self._seq += 1
        self._send({"n": self._seq, "kind": kind, "body": body}, new=True)
        while True:
            msg = self._next(self._serving, streams)
            if msg is None:
                return None, streams, self._error or "the kernel stopped answering"
            if "done" in msg:
                return msg["done"], streams, None
            answer = on_callback(msg) if ("cb" in msg and on_callback) else {"exc": ["RuntimeError", "RuntimeError",
                                                                                       "not a callback"]}
            self._send({"n": self._seq, "kind": "answer", "body": answer})

    def _boot(self, streams):
        """The agent, in a fresh kernel, listening on a socket the judge then connects to (a socket of its
        sandbox's, reached through its /proc root as its ZeroMQ sockets are, and checked to be a socket, not a
        link the kernel made to one of the grader's)."""
        mark("agent: boot")
        inside, outside = self._socket_paths()
        self._poller = zmq.Poller()
        self._subscribe()
        mark("agent: subscribed")
        self._poller.register(self._iopub, zmq.POLLIN)
        msg_id = _settled(self.kc.execute(f"{BOOT}__speclab_judge__.listen({inside!r})\n", silent=False,
                                            store_history=False, allow_stdin=False, stop_on_error=False))
        while self._next(msg_id, streams, lines=False) is not None:
            pass
        if self._error:
            raise RuntimeError(f"the judge's agent could not start in the kernel ({self._error})")
        self._channel = Channel(outside)
        self._poller.register(self._channel.fd, zmq.POLLIN)
        mark("agent: connected")

    def _subscribe(self):
        """A subscription of the judge's own to the kernel's outputs, in a ZeroMQ context of its own. The
        client's socket is nbclient's: ZeroMQ sockets are not thread-safe, and pyzmq's asyncio wrapper
        keeps a reader on it, so polling that socket from here (as a shadow, the first design) shared it
        with code this class does not run (a worker aborted inside zmq_poll there, once in a CI run)."""
        # a session of its own: each Session refuses a signature it has seen, and nbclient's sees these too
        self._session = Session(key=self.kc.session.key, signature_scheme=self.kc.session.signature_scheme)
        self._context = zmq.Context()
        self._iopub = self._context.socket(zmq.SUB)
        self._iopub.linger = 0
        self._iopub.setsockopt(zmq.SUBSCRIBE, b"")
        # A subscription takes effect some time after connect: what the kernel publishes before is lost to
        # it (the boot's idle, then a wait of a cell's time). ipykernel 7 welcomes each new subscription, but
        # its XPUB hears of a topic only once: nbclient's subscription is b"" too, so ours to b"" alone was
        # never welcomed, and every boot waited a poll's 250 ms for the kernel_info below (the timeline). A
        # topic of our own is welcomed once it and the b"" before it (one pipe, in order) are in effect.
        self._iopub.setsockopt(zmq.SUBSCRIBE, WELCOME)
        self._iopub.connect(self.kc._make_url("iopub"))
        # Any message will do, and a kernel_info request makes one (its busy status) should the welcome be missed.
        until = time.monotonic() + (self.startup_timeout or 60)
        while not self._iopub.poll(250):
            if time.monotonic() > until:
                raise RuntimeError("the kernel published nothing the judge could subscribe to")
            if not _settled(self.km.is_alive()):
                raise Dead("the kernel died as the judge's agent started")
            self.kc.kernel_info()

    def _drain_client(self):
        """Read away what the kernel published for the judge's requests from nbclient's own subscription
        (its queue is bounded, 1,000 messages: past it the kernel drops what the next cell publishes)."""
        async def drain():
            channel = self.kc.iopub_channel
            while await channel.msg_ready():
                await channel.get_msg(timeout=0)
        run_sync(drain)()

    def _socket_paths(self):
        """The agent's socket as the kernel names it, and as the judge reaches it."""
        if isinstance(self.km, sandboxes.SandboxedKernelManager):
            inside = f"{sandboxes.SOCKETS}/judge"
            return inside, f"{self.km._link}{inside}"
        if self._socket_folder is None:
            self._socket_folder = tempfile.mkdtemp(prefix="speclab-judge-")
        return f"{self._socket_folder}/judge", f"{self._socket_folder}/judge"

    def _close(self):
        if self._channel is not None:
            self._channel.close()
        if self._iopub is not None:
            self._iopub.close(linger=0)
            self._context.term()
        self._channel, self._poller, self._iopub, self._serving = None, None, None, None

    def _send(self, msg, new=False):
        try:
            self._channel.send(msg, max(0.1, self._deadline - time.monotonic()), new)
        except (OSError, ValueError):  # the agent is gone, or not reading: as if it did not answer
            self._channel.dead = True

    def _next(self, msg_id, streams, lines=True, quick=True):
        """The agent's next line (a dict) for the current request, or None once request msg_id ended (its
        prints collected); past the deadline the kernel is interrupted, and Late raised (with a restart asked
        for if it does not stop). `quick`: a line is what comes next, so the agent's socket alone is waited on
        first (not where the kernel's idle is awaited: that would wait QUICK for nothing)."""
        ended = False
        while True:
            left = self._deadline - time.monotonic()  # checked before each line too: a flood of lines ends here
            if left <= 0:
                if self._interrupting:
                    raise Late("no answer after the interrupt")
                self._interrupt(msg_id)
            if lines and self._channel is not None:
                if self._channel.refused and not self._interrupting:
                    self._needs_restart = True  # the agent's state is unknown: a fresh kernel for the next cell
                    raise Refused(self._channel.refused)
                msg = self._channel.line(self._seq)
                if msg is not None:
                    for out in (msg.get("out") if type(msg.get("out")) is list else ()):
                        if type(out) is list and len(out) == 2 and out[0] in ("stdout", "stderr") \
                                and type(out[1]) is str and sum(len(t) for _, t in streams) < STREAM_CAP:
                            streams.append((out[0], out[1]))
                    return msg
            if ended:
                return None
            if self._channel is not None and self._channel.dead and not self._channel.unpolled:
                self._poller.unregister(self._channel.fd)  # gone: wait for the kernel's idle, death or time
                self._channel.unpolled = True
            if quick and lines and self._channel is not None and not self._channel.dead \
                    and self._channel.wait(max(0.0, min(left, QUICK))):
                self._channel.fill()  # the common case: the agent's next line, without waking ZeroMQ's poll
                continue
            events = dict(self._poller.poll(max(0.0, min(left, 1.0)) * 1000))
            if not events:
                if not _settled(self.km.is_alive()):
                    self._needs_restart = True
                    raise Dead("the kernel died while running this cell; it was restarted")
                continue
            if self._channel is not None and self._channel.fd in events:
                self._channel.fill()
            if self._iopub in events:
                ended = self._iopub_messages(msg_id, streams)

    def _iopub_messages(self, msg_id, streams):
        """Read what the kernel published: prints and errors of msg_id; True once it is idle."""
        ended = False
        while True:
            try:
                _, msg = self._session.recv(self._iopub, mode=zmq.NOBLOCK)
            except (zmq.ZMQError, ValueError):
                return ended
            if msg is None:
                return ended
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["header"]["msg_type"], msg["content"]
            if kind == "stream" and sum(len(t) for _, t in streams) < STREAM_CAP:
                streams.append((content.get("name", "stdout"), content.get("text", "")))
            elif kind == "error":
                self._error = f"{content.get('ename')}: {str(content.get('evalue'))[:300]}"
            elif kind == "status" and content.get("execution_state") == "idle":
                if msg_id == self._serving:
                    self._serving = None
                ended = True

    def _stop_serving(self, streams):
        if self._serving is None or self._channel is None:
            return
        self._deadline = time.monotonic() + 10
        self._seq += 1
        self._send({"n": self._seq, "kind": "stop"}, new=True)
        while self._serving is not None:
            msg = self._next(self._serving, streams, quick=False)
            if msg is None:
                break
            if "cb" in msg:
                self._send({"n": self._seq, "kind": "answer", "body": STOPPED})

    def _interrupt(self, msg_id):
        """Stop what runs past the deadline; Late in any case: was it stopped, or must the kernel restart?"""
        self._interrupting = True
        try:
            _settled(self.km.interrupt_kernel())
            self._deadline = time.monotonic() + min(10, self.timeout or 10)
            while True:
                msg = self._next(msg_id, [], quick=False)
                if msg is None or "done" in msg:  # stopped, or the agent caught it and waits for the next request
                    break
                self._send({"n": self._seq, "kind": "answer", "body": STOPPED})
        except Late:
            self._needs_restart = True
            raise Late(f"the cell ran longer than {self.timeout} s and did not stop when interrupted; "
                       "the kernel was restarted") from None
        finally:
            self._interrupting = False
        raise Late(f"the cell ran longer than {self.timeout} s and was stopped")


def _settled(value):
    """value, or what it stands for if it is awaitable (a method of an async client or kernel manager)."""
    if inspect.isawaitable(value):
        async def wait():
            return await value
        return run_sync(wait)()
    return value


QUICK = 0.05  # seconds the agent's socket alone is waited on before the kernel's outputs are looked at too
STOPPED = {"exc": ["RuntimeError", "RuntimeError", "stopped"]}
WELCOME = b"speclab-judge"  # a subscription topic no one else uses: ipykernel welcomes it (_subscribe)
