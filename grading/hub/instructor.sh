#!/usr/bin/env bash
# The instructor's own set-up, run once AS THE INSTRUCTOR, not root (grading/README.md, step 2):
# plain `nbgrader` commands and the formgrader read the course's config from the course clone.
#   COURSE   the course clone (default ~/speclab): its grading/nbgrader_config.py is the course's config
set -euo pipefail
COURSE=${COURSE:-$HOME/speclab}
mkdir -p "$HOME/.jupyter"
cat > "$HOME/.jupyter/nbgrader_config.py" <<CONFIG
c = get_config()
load_subconfig("$COURSE/grading/nbgrader_config.py")
CONFIG
