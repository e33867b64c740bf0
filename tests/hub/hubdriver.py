"""A real JupyterHub on this machine, for tests/hub: system accounts, the guide's set-up scripts, the hub
started from grading/hub/jupyterhub_config.py, and commands run as one user.

Everything here needs root (accounts, a hub that starts servers as other users). Every account, process
and folder made here is removed by the objects that made it, failures included.
"""
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "browser"))
import labdriver as lab_  # noqa: E402  (Chromium, process trees)

HUB = REPO / "grading" / "hub"
PROXY = REPO / "grading" / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
ENV = Path(sys.prefix)               # the course's Python environment (the venv the tests run in)
ENV_BIN = Path(sys.executable).parent
HUB_READY_S = 90
SPAWN_S = 150
EXIT_GRACE_S = 30   # for the users' processes to end after the hub stops


def missing_parts():
    """What the hub test needs that is not here ([] when nothing is)."""
    missing = lab_.missing_browser_parts()
    if not os.access(PROXY, os.X_OK):
        missing.append(f"{PROXY.relative_to(REPO)} (configurable-http-proxy: `make setup` installs it with npm)")
    if not (ENV_BIN / "jupyterhub").exists():
        missing.append("jupyterhub (pinned in requirements.txt: `make setup`)")
    for tool in ("useradd", "userdel", "groupadd", "groupdel", "chpasswd", "runuser"):
        if not shutil.which(tool):
            missing.append(tool)
    return missing


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def user_env(name, home, **extra):
    """A clean login-like environment for `name`, with the course env's commands first."""
    env = {"HOME": str(home), "USER": name, "LOGNAME": name, "SHELL": "/bin/bash", "LANG": "C.UTF-8",
           "PATH": os.pathsep.join([str(ENV_BIN), "/usr/local/bin", "/usr/bin", "/bin"])}
    for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if key in os.environ:
            env[key] = os.environ[key]
    env.update({k: str(v) for k, v in extra.items()})
    return env


class Background:
    """A command started with as_user(..., background=True): wait() checks it like a foreground one."""

    def __init__(self, full, cwd, what):
        self.what = what
        self.popen = subprocess.Popen(full, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait(self, timeout=600):
        out, err = self.popen.communicate(timeout=timeout)
        if self.popen.returncode:
            raise AssertionError(f"{self.what} exited {self.popen.returncode}:\n{out[-3000:]}\n{err[-3000:]}")
        return out


def as_user(name, home, cmd, cwd=None, check=True, timeout=600, background=False, **env):
    """Run cmd as the OS user `name` (runuser; no root left), with a clean environment."""
    full = ["runuser", "-u", name, "--", "env", "-i",
            *(f"{k}={v}" for k, v in user_env(name, home, **env).items()), *map(str, cmd)]
    if background:
        return Background(full, cwd or home, f"{' '.join(map(str, cmd))} as {name}")
    run = subprocess.run(full, cwd=cwd or home, capture_output=True, text=True, timeout=timeout)
    if check and run.returncode:
        raise AssertionError(f"{' '.join(map(str, cmd))} as {name} exited {run.returncode}:\n"
                             f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    return run


class Accounts:
    """System accounts in one new group, with passwords, homes under `homes`; remove() deletes them all."""

    def __init__(self, homes, roles):
        self.tag = secrets.token_hex(3)
        self.group = f"slg{self.tag}"
        self.homes = Path(homes)
        self.names, self.passwords, self.made = {}, {}, []
        self._group_made = False
        subprocess.run(["groupadd", self.group], check=True, capture_output=True)
        self._group_made = True
        for role in roles:
            name = f"sl{role[0]}{self.tag}"
            subprocess.run(["useradd", "--create-home", "--home-dir", str(self.homes / name), "--gid",
                            self.group, "--shell", "/bin/bash", name], check=True, capture_output=True)
            self.made.append(name)
            password = secrets.token_urlsafe(12)
            subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True,
                           capture_output=True)
            self.names[role], self.passwords[role] = name, password

    def home(self, role):
        return self.homes / self.names[role]

    def run(self, role, cmd, **kw):
        return as_user(self.names[role], self.home(role), cmd, **kw)

    def uids(self):
        uids = set()
        for name in self.made:
            try:
                uids.add(int(subprocess.run(["id", "-u", name], capture_output=True, text=True).stdout))
            except ValueError:
                pass
        return uids

    def socket_folders(self):
        """The kernels' socket folders (grading/kernels/localkernel.py) the accounts still own in /tmp."""
        uids = self.uids()
        return sorted(str(p) for p in Path("/tmp").glob("kernel-*") if p.is_dir() and p.stat().st_uid in uids)

    def processes(self):
        uids = self.uids()
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if os.stat(f"/proc/{entry}").st_uid in uids:
                        found.append(int(entry))
                except OSError:
                    pass
        return found

    def remove(self):
        """Kill what the accounts still run (by pid), delete them with their homes, then the group.
        Returns the pids that had to be killed."""
        # A server the hub has just told to stop may still be closing its kernels: on a loaded
        # machine that took a few seconds. Only what outlives the grace period counts as leaked.
        deadline = time.monotonic() + EXIT_GRACE_S
        left = self.processes()
        while left and time.monotonic() < deadline:
            time.sleep(0.5)
            left = self.processes()
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        problems = []
        leftover = self.socket_folders()
        if leftover:  # a stopped server must take its kernels' folders with it
            problems.append(f"kernel socket folders left in /tmp: {leftover}")
            for folder in leftover:
                shutil.rmtree(folder, ignore_errors=True)
        for name in self.made:
            run = subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)
            if run.returncode not in (0, 12):  # 12: the home could not be removed (mail spool etc.)
                problems.append(f"userdel {name}: {run.stderr.strip()}")
        if self._group_made:
            subprocess.run(["groupdel", self.group], capture_output=True)
        if problems:
            raise RuntimeError("; ".join(problems))
        return left


def traversable(path):
    """Give 'others' search (x) permission on every folder above `path` that lacks it, so the users'
    servers can reach the course env; returns [(folder, old mode)] to put back with restore()."""
    changed = []
    for folder in [*reversed(Path(path).resolve().parents), Path(path).resolve()]:
        mode = folder.stat().st_mode & 0o7777
        if not mode & 0o001:
            os.chmod(folder, mode | 0o001)
            changed.append((folder, mode))
    return changed


def restore(changed):
    for folder, mode in reversed(changed):
        os.chmod(folder, mode)


class Hub:
    """JupyterHub from grading/hub/jupyterhub_config.py, as root, on 127.0.0.1 ports of its own."""

    def __init__(self, base, hub_etc, group, instructors):
        self.dir = Path(base) / "hub"
        self.dir.mkdir(mode=0o700)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = self.dir / "test_config.py"
        # The guide's file, then only what a test needs: free ports, a state folder, and two lab options
        # the test reads the page with (the JupyterLab app object, no news/update pop-ups).
        config.write_text(
            "c = get_config()\n"
            f"load_subconfig({str(HUB / 'jupyterhub_config.py')!r})\n"
            f"c.JupyterHub.bind_url = {self.url!r}\n"
            f"c.JupyterHub.hub_bind_url = 'http://127.0.0.1:{free_port()}'\n"
            f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{free_port()}'\n"
            f"c.ConfigurableHTTPProxy.pid_file = {str(self.dir / 'proxy.pid')!r}\n"
            f"c.JupyterHub.db_url = 'sqlite:///{self.dir / 'jupyterhub.sqlite'}'\n"
            f"c.JupyterHub.cookie_secret_file = {str(self.dir / 'cookie_secret')!r}\n"
            "c.JupyterHub.cleanup_servers = True\n"
            "c.Spawner.args = ['--LabApp.expose_app_in_browser=True', '--LabApp.news_url=None',\n"
            "                  '--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate']\n")
        env = dict(os.environ, SPECLAB_ENV=str(ENV), SPECLAB_HUB_ETC=str(hub_etc), SPECLAB_GROUP=group,
                   SPECLAB_INSTRUCTORS=",".join(instructors), SPECLAB_PROXY=str(PROXY),
                   PATH=os.pathsep.join([str(ENV_BIN), os.environ.get("PATH", "")]))
        for key in ("JUPYTER_CONFIG_PATH", "JUPYTER_CONFIG_DIR", "SPECLAB_COURSE_ROOT", "JUPYTER_TOKEN"):
            env.pop(key, None)
        self.proc = lab_.Process([str(ENV_BIN / "jupyterhub"), "-f", str(config)], cwd=self.dir, env=env,
                                 log=self.dir / "jupyterhub.log")
        lab_.wait_until_answers(f"{self.url}/hub/api/", self.proc, timeout=HUB_READY_S)

    def log_tail(self, n=4000):
        return self.proc.log_tail(n)

    def stop(self):
        """SIGTERM: the hub stops every user's server and the proxy; returns what had to be killed."""
        return self.proc.stop(grace=30)


def wait_for(predicate, timeout, what, step=0.3):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise TimeoutError(f"{what} within {timeout} s")


def uid(name):
    import pwd
    return pwd.getpwnam(name).pw_uid
