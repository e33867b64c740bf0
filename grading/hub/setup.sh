#!/usr/bin/env bash
# The course's one-time set-up on a JupyterHub machine, as root (grading/README.md, "The JupyterHub
# route", steps 3 to 5). tests/hub runs this very script, with the folders in a temporary directory.
#
#   EXCHANGE     nbgrader's exchange: one folder every user can write     (default /srv/nbgrader/exchange)
#   HUB_ETC      Jupyter config folders for the users' servers: HUB_ETC/everyone for all, HUB_ETC/students
#                for students only; grading/hub/jupyterhub_config.py puts them on each server's
#                JUPYTER_CONFIG_PATH                                       (default /etc/jupyter/speclab)
#   COURSE_ID    nbgrader's course id                                      (default speclab)
#   TIMEZONE     the exchange's time zone: submission times, due dates    (default UTC)
#   PYTHON       the Python of the environment the users' servers run     (default: this clone's .venv
#                (step 1's /srv/speclab/.venv), else python3 on PATH, as in an image built from a clone)
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
EXCHANGE=${EXCHANGE:-/srv/nbgrader/exchange}
HUB_ETC=${HUB_ETC:-/etc/jupyter/speclab}
COURSE_ID=${COURSE_ID:-speclab}
TIMEZONE=${TIMEZONE:-UTC}
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$REPO/.venv/bin/python" ]; then PYTHON=$REPO/.venv/bin/python; else PYTHON=python3; fi
fi

# 3. The exchange. nbgrader makes <course>/outbound (readable by all), inbound (students may write
#    into it but not list it) and feedback (nor list it) inside, with those modes, on first release.
mkdir -p "$EXCHANGE"
chmod 0777 "$EXCHANGE"

# 4. The global nbgrader config: the course and the exchange, for every user's server.
mkdir -p "$HUB_ETC/everyone" "$HUB_ETC/students/labconfig" "$HUB_ETC/students/jupyter_server_config.d"
cat > "$HUB_ETC/everyone/nbgrader_config.py" <<CONFIG
c = get_config()
c.CourseDirectory.course_id = "$COURSE_ID"
c.Exchange.root = "$EXCHANGE"
c.Exchange.timezone = "$TIMEZONE"
CONFIG
# Each server's kernels listen on private Unix sockets, not TCP ports: a class starting kernels at
# once on one machine would otherwise race for ports (grading/kernels/localkernel.py).
cat > "$HUB_ETC/everyone/jupyter_server_config.json" <<'JSON'
{
  "AsyncMappingKernelManager": {
    "kernel_manager_class": "grading.kernels.serverkernel.PrivateServerKernelManager"
  }
}
JSON

# 5. Students do not get the instructor's tools: the formgrader, the create-assignment toolbar and the
#    course list are off, in the browser (lab plugins) and on the server (server extensions). Students
#    keep @jupyter/nbgrader:assignment-list (the Assignments tab) and :validate-assignment (Validate).
#    JUPYTER_CONFIG_PATH comes before the environment's own config folder, so this wins over the
#    "enabled" that nbgrader's install wrote there. (`jupyter labextension disable --level=sys_prefix`
#    cannot be undone per user in a virtual environment: Jupyter reads the environment's folder before
#    ~/.jupyter there.) The hub gives the instructors' servers only HUB_ETC/everyone.
cat > "$HUB_ETC/students/labconfig/page_config.json" <<'JSON'
{
  "disabledExtensions": {
    "@jupyter/nbgrader:formgrader": true,
    "@jupyter/nbgrader:create-assignment": true,
    "@jupyter/nbgrader:course-list": true
  }
}
JSON
cat > "$HUB_ETC/students/jupyter_server_config.d/speclab-students.json" <<'JSON'
{
  "ServerApp": {
    "jpserver_extensions": {
      "nbgrader.server_extensions.formgrader": false,
      "nbgrader.server_extensions.course_list": false
    }
  }
}
JSON
chmod -R a+rX "$HUB_ETC"

# Last, JupyterLab's defaults in the servers' environment, as `make setup` writes them: no "get notified about
#   official Jupyter news?" toast over everyone's first notebook, no update check (grading/labsettings.py:
#   an overrides.json in the environment's JupyterLab settings folder, which every server reads).
(cd "$REPO" && "$PYTHON" -m grading.labsettings)
