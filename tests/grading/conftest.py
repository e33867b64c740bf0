"""Kernels for the judge's tests (tests/grading/test_judge.py, test_judge_attacks.py), written once: a kernel's
agent in this process (InProcessKernel: no socket, no kernel, every message through JSON), and a real
sandboxed kernel driven by JudgeExecute (the fixture `judge_in_sandbox`)."""
import json
import types

import nbformat
import pytest


def code_cell(source, **nbgrader):
    """A code cell; with nbgrader metadata (grade_id, solution, grade) when given any."""
    c = nbformat.v4.new_code_cell(source)
    if nbgrader:
        c.metadata["nbgrader"] = {"schema_version": 3, "locked": False, "points": int(nbgrader["grade"]), **nbgrader}
    return c


class InProcessKernel:
    """A kernel's agent in this process (its own copy of codec.py and agent.py, as the kernel boots them) that ran
    `student`; its lines reach the judge's on_callback directly, through JSON. With `forged`, a kernel whose agent
    the student rewrote: it answers every request with that line."""

    def __init__(self, student="", forged=None):
        from grading.judge.execute import AGENT, CODEC

        self.ns, self.forged, self.answer = {"__name__": "__main__"}, forged, None
        self.module = types.ModuleType("speclab_judge_agent")
        for source in (CODEC, AGENT):  # as the kernel's boot runs them (execute.BOOT)
            exec(compile(source, "speclab_judge_agent", "exec"), self.module.__dict__)
        self.agent = self.module.install(self.ns)
        self.ns["__speclab_judge__"] = self.agent
        exec(student, self.ns)
        self.agent._write = self._write
        self.agent._read = lambda: {"kind": "answer", "n": self.agent.n, "body": self.answer}

    def _write(self, msg):
        if "cb" in msg:
            self.answer = json.loads(json.dumps(self.on_callback(json.loads(json.dumps(msg)))))

    def __call__(self, kind, body, on_callback):
        if self.forged is not None:
            return json.loads(json.dumps(self.forged)), [], None
        self.on_callback, self.agent.n = on_callback, 1
        out = {}
        if kind == "call":
            out = self.agent.call(json.loads(json.dumps(body)))
        elif kind == "swap":
            self.agent.swap(json.loads(json.dumps(body)))
        elif kind == "unswap":
            self.agent.unswap()
        return json.loads(json.dumps(out)), [], None


@pytest.fixture
def judge_in_sandbox():
    """judge(nb, source, folder, timeout): `nb` executed by JudgeExecute in a sandboxed kernel (where bubblewrap
    runs), its tests judged against `source` (the instructor's notebook, written to folder/source/n.ipynb)."""
    from traitlets.config import Config

    from grading.judge.execute import JudgeExecute
    from grading.kernels import sandbox

    def judge(nb, source, folder, timeout):
        (folder / "source").mkdir(parents=True)
        nbformat.write(source, folder / "source" / "n.ipynb")
        config = Config()
        config.SandboxedKernelManager.folder = str(folder / "kernel")
        config.JudgeExecute.source = str(folder / "source")
        ep = JudgeExecute(config=config, timeout=timeout, sandbox=sandbox.available()[0], kernel_name="python3")
        ep.preprocess(nb, {"metadata": {"path": str(folder)}, "nbgrader": {"notebook": "n", "assignment": "n"}})
        return nb

    return judge
