"""The judge's own sandbox (grading/judge/box.py), attacked from inside as a compromised judge would: code that runs in
the process where a submission is executed and judged tries to delete a classmate's submission and the gradebook,
read the grader's environment, reach the grader over the network, write the course's code, and leave a process
behind for the next submission. Each attack is run twice: once as today's judge ran (a plain process of the
grader's, which is what a worker was: the control, where each attack must succeed, or the test proves
nothing), once in the box, where each must fail."""
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from grading.judge import box
from grading.kernels import sandbox as sandboxes
from grading.course import REPO

pytestmark = pytest.mark.skipif(not sandboxes.available()[0], reason="bubblewrap cannot start here")

ATTACK = r"""
import json, os, shutil, socket, subprocess, sys
course, port, token, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
did = {}
def attempt(name, f):
    try:
        f()
        did[name] = True
    except Exception as e:
        did[name] = f"{type(e).__name__}: {e}"
attempt("deleted classmate", lambda: shutil.rmtree(os.path.join(course, "submitted", "alice")))
attempt("deleted gradebook", lambda: os.remove(os.path.join(course, "gradebook.db")))
def secret():
    assert os.environ.get("SPECLAB_TEST_SECRET") == token, "not in my environment"
attempt("read environment", secret)
def call_home():
    socket.create_connection(("127.0.0.1", port), timeout=3).sendall(token.encode())
attempt("network", call_home)
def write_code():
    with open(os.path.join(sys.argv[5], "box_attack_was_here.py"), "w") as f:
        f.write("x = 1\n")
attempt("wrote course code", write_code)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "lingering-" + token],
                 start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
with open(out, "w") as f:
    json.dump(did, f)
"""


@pytest.fixture
def classmate(tmp_path):
    """A course with a classmate's submission and a gradebook, and a grader listening on loopback."""
    course = tmp_path / "course"
    (course / "submitted" / "alice" / "02_acceptance_rule").mkdir(parents=True)
    (course / "submitted" / "alice" / "02_acceptance_rule" / "02_acceptance_rule.ipynb").write_text("{}")
    (course / "gradebook.db").write_text("scores")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    heard = []

    def serve():
        listener.settimeout(30)
        try:
            conn, _ = listener.accept()
            heard.append(conn.recv(100).decode())
            conn.close()
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()
    yield course, listener.getsockname()[1], heard
    listener.close()


def lingering(token):
    """Processes still alive on this machine whose command line names `token`."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if (f"lingering-{token}".encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
                        and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"):
                    found.append(int(pid))
            except OSError:
                pass
    return found


def attack(course, port, boxed):
    """Run ATTACK as today's judge ran (boxed=False: a process of the grader's) or in a fresh box; returns what
    it managed (name: True, or why not) and the token it was given."""
    token = uuid.uuid4().hex
    folder = Path(box.tempfile.mkdtemp(prefix="speclab-box-test-"))
    box.prepare(folder, box.judge_uid(folder))
    out = folder / "did.json"
    argv = [sandboxes.python(), "-c", ATTACK, str(course), str(port), token, str(out), str(REPO / "grading")]
    env = {**os.environ, "SPECLAB_TEST_SECRET": token}
    old = os.environ.get("SPECLAB_TEST_SECRET")
    os.environ["SPECLAB_TEST_SECRET"] = token  # the grader's own environment: the box must not pass it on
    try:
        cmd = box.command(folder, argv=argv) if boxed else argv
        done = subprocess.run(cmd, env=env if not boxed else {"PATH": os.environ["PATH"]}, capture_output=True,
                              text=True, timeout=120)
        assert out.is_file(), done.stderr[-2000:]
        return json.loads(out.read_text()), token
    finally:
        if old is None:
            os.environ.pop("SPECLAB_TEST_SECRET", None)
        else:
            os.environ["SPECLAB_TEST_SECRET"] = old
        (REPO / "grading" / "box_attack_was_here.py").unlink(missing_ok=True)
        box.shutil.rmtree(folder, ignore_errors=True)


def kill(pids):
    for pid in pids:
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def test_the_attacks_work_on_a_plain_process_of_the_graders(classmate):
    """The control: as today's judge ran (in the worker, as the grader), every attack succeeds."""
    course, port, heard = classmate
    did, token = attack(course, port, boxed=False)
    try:
        assert did == dict.fromkeys(("deleted classmate", "deleted gradebook", "read environment", "network",
                                     "wrote course code"), True), did
        assert lingering(token), "the control's process did not survive its run"
    finally:
        kill(lingering(token))


def test_no_attack_works_from_inside_the_box(classmate):
    course, port, heard = classmate
    did, token = attack(course, port, boxed=True)
    for _ in range(50):  # the box's process namespace ends with it; Linux kills the rest as it is torn down
        survivors = lingering(token)
        if not survivors:
            break
        time.sleep(0.1)
    kill(survivors)
    assert not [name for name, result in did.items() if result is True], did
    assert (course / "submitted" / "alice" / "02_acceptance_rule" / "02_acceptance_rule.ipynb").is_file()
    assert (course / "gradebook.db").read_text() == "scores"
    time.sleep(0.5)
    assert token not in "".join(heard)
    assert not survivors, "a process started in the box outlived it"


def test_the_box_runs_without_capabilities_as_a_user_of_its_own(tmp_path):
    folder = Path(box.tempfile.mkdtemp(prefix="speclab-box-test-"))
    try:
        box.prepare(folder, box.judge_uid(folder))
        code = ("import os; s = open('/proc/self/status').read();"
                "print([l.split()[1] for l in s.splitlines() if l.startswith('CapEff')][0], os.getuid())")
        done = subprocess.run(box.command(folder, argv=[sandboxes.python(), "-c", code]), capture_output=True,
                              text=True, timeout=120, env={"PATH": os.environ["PATH"]})
        caps, uid = done.stdout.split()
        assert int(caps, 16) == 0, done.stdout
        assert int(uid) == box.judge_uid(folder) and (os.geteuid() != 0 or int(uid) != 0)
    finally:
        box.shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


@pytest.mark.skipif(os.geteuid() != 0 or not box.shutil.which("setpriv") or not os.path.exists("/usr/bin/python3"),
                    reason="needs root (to become another user), setpriv and the system's python3")
def test_a_grader_that_is_not_root_gets_the_box_and_the_kernels_sandbox_nested_in_it():
    """The box's two launchers (box.HOST, box.INSIDE) as a user that is not root (nobody), on the system's Python
    (the course's virtualenv may lie where nobody cannot read): the judge's side has no capabilities, and an
    unprivileged bwrap with a /proc of its own starts inside, as the kernel's sandbox does."""
    tmp_path = Path(box.tempfile.mkdtemp(prefix="speclab-box-test-"))  # pytest's own is root's alone
    for name in ("host", "inside"):
        (tmp_path / f"{name}.py").write_text(getattr(box, name.upper()))
    tmp_path.chmod(0o755)
    system = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
              "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    nested = " ".join(["bwrap", "--unshare-user", "--unshare-pid", "--unshare-net", *system, "--", "echo", "nested"])
    judge = f"grep CapEff /proc/self/status; {nested}"
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-I", "-S",
           str(tmp_path / "host.py"), "1000", sandboxes.bwrap(), "--unshare-pid", "--unshare-net", "--die-with-parent",
           *system, "--ro-bind", str(tmp_path / "inside.py"), "/inside.py", "--", "/usr/bin/python3", "-I", "-S",
           "/inside.py", "0,0,1000", "/bin/sh", "-c", judge]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    finally:
        box.shutil.rmtree(tmp_path, ignore_errors=True)
    assert done.stdout.split() == ["CapEff:", "0000000000000000", "nested"], (done.stdout, done.stderr)


def test_the_kernels_speclab_is_the_workers_copy_only_when_it_hides_the_same_names(tmp_path):
    """The worker builds the kernel's speclab without the graded notebook's references and binds it into the box
    (box.prebuilt); the box's kernel manager takes it only for the very names and notebook it was told to hide, and
    builds its own otherwise. Seen failing with _hidden_copy taking any prebuilt copy (the second assert)."""
    from grading.judge.execute import JudgeExecute

    aid = "02_acceptance_rule"
    step = JudgeExecute(source=str(REPO / "solutions" / aid))
    made = box.prebuilt(step, REPO / "solutions" / aid, aid)
    assert made["names"] and made["notebook"] == aid
    assert "raise NotImplementedError" in (Path(made["folder"]) / "rules" / "speculative.py").read_text()
    km = sandboxes.SandboxedKernelManager(folder=str(tmp_path), hidden=made["names"], notebook=aid, prebuilt=made)
    assert str(km._hidden_copy()) == made["folder"]
    other = sandboxes.SandboxedKernelManager(folder=str(tmp_path), hidden=["residual"], notebook=aid, prebuilt=made)
    assert str(other._hidden_copy()) != made["folder"]
    step.hide_references = False
    assert box.prebuilt(step, REPO / "solutions" / aid, aid) == {}
