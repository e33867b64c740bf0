"""JupyterHub for the course on one machine (grading/README.md, "The JupyterHub route").

    jupyterhub -f grading/hub/jupyterhub_config.py        # as root: it starts each user's server as that user

Users log in with their system account and password (PAM); each gets a JupyterLab of their own,
run as their own OS user by the LocalProcessSpawner, from the course's Python environment. Run
grading/hub/setup.sh once first. tests/hub starts a hub from this very file: it sets the
environment variables below and adds only ports, a state folder and two test-only lab options.
"""
import os

c = get_config()  # noqa: F821 (injected by traitlets)

# The course's Python environment: this repository's pins (requirements.txt, which includes jupyterhub
# itself) and speclab, readable by every user. Made by `make setup` in the course clone (its .venv/),
# or by `python3 -m venv ENV && ENV/bin/pip install -r requirements.txt . ` anywhere.
COURSE_ENV = os.environ.get("SPECLAB_ENV", "/srv/speclab/.venv")
# What grading/hub/setup.sh wrote: HUB_ETC/everyone for every server, HUB_ETC/students for students only.
HUB_ETC = os.environ.get("SPECLAB_HUB_ETC", "/etc/jupyter/speclab")
# Who may log in: the members of this system group (students and instructors).
COURSE_GROUP = os.environ.get("SPECLAB_GROUP", "speclab")
# Whose servers keep nbgrader's instructor tools (formgrader, create assignment, course list).
INSTRUCTORS = set(os.environ.get("SPECLAB_INSTRUCTORS", "instructor").split(","))
# The proxy: configurable-http-proxy, which `make setup` installs into the course clone's grading/hub/node_modules/.
PROXY = os.environ.get("SPECLAB_PROXY", "/srv/speclab/grading/hub/node_modules/.bin/configurable-http-proxy")

c.JupyterHub.bind_url = "http://:8000"          # put TLS in front (a reverse proxy), or set ssl_cert/ssl_key
c.JupyterHub.authenticator_class = "pam"        # system accounts and their passwords
c.PAMAuthenticator.allowed_groups = {COURSE_GROUP}
c.Authenticator.admin_users = set(INSTRUCTORS)
c.JupyterHub.spawner_class = "localprocess"     # each server runs as its user, in their home
c.ConfigurableHTTPProxy.command = [PROXY]

c.Spawner.cmd = [os.path.join(COURSE_ENV, "bin", "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.http_timeout = 120                    # a loaded machine takes a while to start JupyterLab
c.Spawner.start_timeout = 120


def _config_path(spawner):
    """Students' servers read the students' folder first (instructor tools off); instructors' do not."""
    folders = [os.path.join(HUB_ETC, "everyone")]
    if spawner.user.name not in INSTRUCTORS:
        folders.insert(0, os.path.join(HUB_ETC, "students"))
    return os.pathsep.join(folders)


c.Spawner.environment = {
    "JUPYTER_CONFIG_PATH": _config_path,
    # the environment's commands first: nbgrader's gradebook runs `alembic`, a terminal gets `nbgrader`
    "PATH": os.pathsep.join([os.path.join(COURSE_ENV, "bin"), "/usr/local/bin", "/usr/bin", "/bin"]),
}
