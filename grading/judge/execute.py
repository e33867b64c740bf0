"""JudgeExecute: nbgrader's Execute step with the test cells run by the judge, outside the kernel.

The fresh sandboxed kernel runs every cell of the submission but the test cells (the student's own cells
too: what they do cannot reach the tests any more, and an honest helper keeps working), with RobustExecute's
restarts, memory limit and timeouts. Each test cell runs in the worker (judge.Judge); its outputs are written into the cell, so
nbgrader's SaveAutoGrades and GetGrades score it as before. Each call of a student's function may take a
cell timeout (then the kernel is interrupted, and restarted if it does not stop); the submission's own
limit (grading/grade/pool.py) bounds the whole.
"""
import json
import time
from pathlib import Path

import nbformat
import zmq
import zmq.asyncio
from jupyter_core.utils import ensure_async, run_sync
from nbclient.util import run_hook
from traitlets import Bool, Unicode

from ..cells import grade_id
from ..grade.kernel import RobustExecute
from . import agent
from .judge import Dead, Judge, Late, is_test

# Notebooks graded the old way (tests in the kernel), with the reason.
OPT_OUT = {
    "08_real_text": "its tests hand the student's functions the course's n-gram models, callable objects holding "
                    "tables of a whole corpus: sent by value at every call (the first design), the reference "
                    "submission ran past the submission limit (1,320 s); called back instead (now), it took 500 s against "
                    "121 s in the kernel and one of its tests ran past the cell timeout",
    "10_real_transformer": "its tests hand the student's functions objects of their own with methods (a target "
                           "that counts its forward passes, a stand-in draft with a stand-in KV cache) whose calls "
                           "change a cache the student's code holds; the codec sends plain data and course objects "
                           "by state, so test_verify_block and test_confident_draft could not be judged",
}

AGENT = Path(agent.__file__).read_text()
BOOT = ("def __speclab_boot__(src):\n"
        "    import types\n"
        "    m = types.ModuleType('speclab_judge_agent')\n"
        "    exec(compile(src, 'speclab_judge_agent', 'exec'), m.__dict__)\n"
        "    return m.install(globals())\n"
        f"__speclab_judge__ = __speclab_boot__({AGENT!r})\n"
        "del __speclab_boot__\n")

class JudgeExecute(RobustExecute):
    judge = Bool(True, help="run the test cells in the grading worker (the judge), not in the kernel").tag(config=True)
    source = Unicode("", help="the assignment's source folder (solutions/<id>); empty: the course's "
                              "(CourseDirectory)").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._judge, self._agent, self._serving, self._needs_restart, self._error = None, False, None, False, None
        self._interrupting = False
        info = (resources or {}).get("nbgrader", {})
        path = self._source(info.get("assignment", "")) / f"{info.get('notebook', '')}.ipynb"
        if self.judge and info.get("assignment") not in OPT_OUT and path.is_file():
            self._judge = Judge(nbformat.read(path, as_version=4), self._transport)
        return super().preprocess(nb, resources, km)

    def _source(self, aid):
        """The assignment's source folder: `source`, or the course's (nbgrader's own paths, which name no scratch
        course: `nbgrader autograde` and the formgrader with the course's config, grading/nbgrader_steps.py)."""
        if self.source:
            return Path(self.source)
        from nbgrader.coursedir import CourseDirectory

        course = CourseDirectory(config=self.config)
        return Path(course.root) / course.source_directory / aid

    def preprocess_cell(self, cell, resources, index):
        j = self._judge
        if j is None or cell.cell_type != "code":
            return super().preprocess_cell(cell, resources, index)
        if is_test(cell):
            self._skip.add(index)  # never run in the kernel, nor replayed after a restart
            run_sync(run_hook)(self.on_cell_start, cell=cell, cell_index=index)  # make check's progress line
            outputs = self._judge_cell(cell, index)
            for out in outputs:
                self._budget.admit(out)  # cut as the kernel's outputs are (RobustExecute.output)
            cell.outputs, cell.execution_count = outputs, None
            return cell, resources
        return super().preprocess_cell(cell, resources, index)

    def _judge_cell(self, cell, index):
        try:
            return self._judge.run_test(grade_id(cell), cell.source)
        finally:
            if not self._needs_restart:
                try:
                    run_sync(self._stop_serving)()
                except Late:
                    self._needs_restart = True
            if self._needs_restart:
                self._needs_restart = False
                self._serving = None
                self._restart_and_replay(index)

    def _restart(self):
        self._agent, self._serving = False, None
        super()._restart()

    # the kernel's side: an agent serving requests through stdin, one execute_request per test cell
    def _transport(self, line, on_callback):
        return run_sync(self._exchange)(line, on_callback)

    async def _exchange(self, line, on_callback):
        self._deadline = time.monotonic() + (self.timeout or 60)  # each call may take a cell's time
        streams = []
        if not self._agent:
            await self._run(BOOT, streams)
            self._agent = True
        if self._serving is None:
            self._serving = await ensure_async(self.kc.execute(
                "__speclab_judge__.serve()", silent=False, store_history=False, allow_stdin=True, stop_on_error=False))
            self._error = None
            if await self._prompt(streams) is None:
                return None, streams, self._error
        await ensure_async(self.kc.input(line))
        while True:
            prompt = await self._prompt(streams)
            if prompt is None:
                return None, streams, self._error or "the kernel stopped answering"
            try:
                msg = json.loads(prompt)
            except (ValueError, RecursionError):
                msg = None
            if type(msg) is dict and "done" in msg:
                return msg["done"], streams, None
            answer = on_callback(msg) if (type(msg) is dict and "cb" in msg and on_callback) else ""
            await ensure_async(self.kc.input(answer))

    async def _prompt(self, streams):
        """The next line the serving agent asks (it then waits for the answer), or None if it stopped serving."""
        while True:
            kind, text = await self._next(self._serving, streams)
            if kind == "prompt":
                return text
            if kind == "idle":
                self._serving = None
                return None

    async def _stop_serving(self):
        if self._serving is None:
            return
        self._deadline = time.monotonic() + 10
        await ensure_async(self.kc.input("stop"))
        while self._serving is not None:
            kind, _ = await self._next(self._serving, [])
            if kind == "idle":
                self._serving = None
            elif kind == "prompt":
                await ensure_async(self.kc.input("stop"))

    async def _run(self, code, streams):
        msg_id = await ensure_async(self.kc.execute(code, silent=False, store_history=False, allow_stdin=False,
                                                    stop_on_error=False))
        while (await self._next(msg_id, streams))[0] != "idle":
            pass

    async def _next(self, msg_id, streams):
        """("prompt", text) or ("idle", None) for request msg_id, collecting its prints; past the deadline the
        kernel is interrupted, and Late raised (with a restart asked for if it does not stop)."""
        kc = self.kc
        poller = zmq.asyncio.Poller()
        channels = {kc.iopub_channel.socket: kc.get_iopub_msg, kc.stdin_channel.socket: kc.get_stdin_msg}
        for sock in channels:
            poller.register(sock, zmq.POLLIN)
        while True:
            left = self._deadline - time.monotonic()
            if left <= 0:
                if self._interrupting:
                    raise Late("no answer after the interrupt")
                await self._interrupt(msg_id)
            events = dict(await poller.poll(max(0.0, min(left, 1.0)) * 1000))
            if not events:
                if not await ensure_async(self.km.is_alive()):
                    self._needs_restart = True
                    raise Dead("the kernel died while running this cell; it was restarted")
                continue
            for sock in events:
                msg = await channels[sock](timeout=0)
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind, content = msg["header"]["msg_type"], msg["content"]
                if kind == "input_request":
                    return "prompt", content.get("prompt", "")
                if kind == "stream" and sum(len(t) for _, t in streams) < 100_000:
                    streams.append((content.get("name", "stdout"), content.get("text", "")))
                elif kind == "error":
                    self._error = f"{content.get('ename')}: {str(content.get('evalue'))[:300]}"
                elif kind == "status" and content.get("execution_state") == "idle":
                    return "idle", None

    async def _interrupt(self, msg_id):
        """Stop what runs past the deadline; Late in any case: was it stopped, or must the kernel restart?"""
        self._interrupting = True
        try:
            await ensure_async(self.km.interrupt_kernel())
            self._deadline = time.monotonic() + min(10, self.timeout or 10)
            while True:
                kind, text = await self._next(msg_id, [])
                if kind == "idle":
                    if msg_id == self._serving:
                        self._serving = None
                    break
                try:
                    msg = json.loads(text)
                except (ValueError, RecursionError):
                    msg = None
                if type(msg) is dict and "done" in msg:  # the agent caught it and waits for the next request
                    break
                await ensure_async(self.kc.input(json.dumps({"exc": ["RuntimeError", "RuntimeError", "stopped"]})))
        except Late:
            self._needs_restart = True
            raise Late(f"the cell ran longer than {self.timeout} s and did not stop when interrupted; "
                       "the kernel was restarted") from None
        finally:
            self._interrupting = False
        raise Late(f"the cell ran longer than {self.timeout} s and was stopped")
