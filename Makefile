# dltutor: the two commands a learner needs are `make lab` and `make test`.
# Both create the virtual environment .venv on first use (Python 3.10 or newer).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Stamps remember what was installed, so a changed pyproject.toml reinstalls.
LAB_STAMP  := $(VENV)/.installed-lab
TEST_STAMP := $(VENV)/.installed-test
SITE_STAMP := $(VENV)/.installed-site
# The lab's Voilà template is copied into .venv by the install (even an editable one): a changed
# template is installed again.
VOILA_TEMPLATE := $(wildcard share/jupyter/voila/templates/dltutor/*)
LAB_PORT ?= 8888
# The referees: real PyTorch (CPU build) and PaddlePaddle 3.x in an environment of their own,
# for tests/frameworks only (the kit and `make lab` never need them). On the project's machines
# pip finds a CPU wheel of torch 2.13.0 on disk; elsewhere ask PyTorch's CPU index, e.g.
#   make test TORCH="torch --index-url https://download.pytorch.org/whl/cpu"
FW_VENV := .venv-frameworks
FW_BIN  := $(FW_VENV)/bin
FW_STAMP := $(FW_VENV)/.installed
TORCH ?= torch==2.13.0
# The JupyterHub proxy (npm), for the class hub's tests and `make classroom-test`.
CHP := build/node/node_modules/.bin/configurable-http-proxy

.PHONY: lab lab-zh test test-suite test-fast test-frameworks test-cpus notebooks bench wheel site classroom-test clean help

help:
	@echo "make lab    - install the kit in .venv and open JupyterLab on notebooks/"
	@echo "make lab-zh - the same, on the Chinese edition (notebooks/zh/)"
	@echo "make test   - install the test extras in .venv and run the whole suite"
	@echo "make test-fast - only the unit tests and doctests (a minute or two)"
	@echo "make test-frameworks - only the claims about PyTorch and Paddle, checked by them"
	@echo "make test-cpus - rerun the notebooks and doctests under other CPUs' rounding only"
	@echo "make notebooks - rebuild every chapter from notebooks/src and store its outputs"
	@echo "make bench  - run the speed benchmarks (benchmarks/RESULTS.md records them)"
	@echo "make wheel  - build dist/dltutor-*.whl, the kit with its chapters (dltutor lab)"
	@echo "make site   - build the chapters as a static website in site/ (both languages)"
	@echo "make classroom-test - a JupyterHub on 127.0.0.1 with 20 students at once, measured"
	@echo "make clean  - remove .venv and caches"

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' || \
	  { echo "dltutor needs Python 3.10 or newer; run: make PYTHON=python3.12 ..."; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(LAB_STAMP): pyproject.toml $(VOILA_TEMPLATE) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

# The test extras include the site's: after `make test`, `make site` installs nothing.
$(TEST_STAMP): pyproject.toml $(VOILA_TEMPLATE) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	@touch $@ $(LAB_STAMP) $(SITE_STAMP)

$(SITE_STAMP): pyproject.toml $(VOILA_TEMPLATE) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[site]"
	@touch $@ $(LAB_STAMP)

# torch first, on its own line: a plain `torch` requirement could otherwise pull a CUDA build of
# several GB; with it installed, the extra's range for torch installs nothing more.
$(FW_STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' || \
	  { echo "dltutor needs Python 3.10 or newer; run: make PYTHON=python3.12 ..."; exit 1; }
	$(PYTHON) -m venv $(FW_VENV)
	$(FW_BIN)/python -m pip install --quiet --upgrade pip
	$(FW_BIN)/python -m pip install --quiet $(TORCH)
	$(FW_BIN)/python -m pip install --quiet -e ".[frameworks]"
	@touch $@

# `dltutor lab` (dltutor/launch) serves the clone's notebooks/ where they are, opened at the first
# chapter, and prints one address to open; `make lab-zh` opens the Chinese edition's first
# chapter (notebooks/zh/00_welcome.zh.ipynb) and the kit speaks Chinese.
lab: $(LAB_STAMP)
	@$(BIN)/dltutor lab notebooks --port $(LAB_PORT) $(LAB_OPTIONS)

lab-zh:
	@$(MAKE) --no-print-directory lab LAB_OPTIONS="--lang zh"

# In parallel, one worker per core: each notebook (nbval) and each test module stays on one
# worker (--dist loadscope), so the slow CPU-variant module runs beside everything else.
# Where npm is found, the class hub's proxy comes too (tests/delivery/test_class_hub.py runs a
# real hub with real accounts; without npm or root that test is skipped and says why).
# The frameworks' environment (PyTorch and Paddle) installs beside the suite (make -j2), not
# before it: a failing test shows without waiting for torch. tests/frameworks runs after both.
test: $(TEST_STAMP)
	@$(MAKE) --no-print-directory -j2 test-suite $(FW_STAMP)
	$(MAKE) --no-print-directory test-frameworks

# `make test` without tests/frameworks.
test-suite: $(TEST_STAMP) $(if $(shell command -v npm 2>/dev/null),$(CHP))
	$(BIN)/python -m pytest -n auto --dist loadscope

# The quick check while editing dltutor/: its unit tests and every doctest, in parallel (on 2
# cores, one to two minutes). Left out, for `make test`: nbval and the chapters' own checks
# (tests/notebooks, each chapter's exercise solutions, the lab demos' training runs, the
# chapters' imports), the browser, anything that starts a server or a kernel (launch, delivery,
# the twins' kernels) and tests/frameworks. A module's tests: grep its path in tests/TESTMAP.
FAST_SKIPS := tests/frameworks tests/browser tests/delivery tests/launch tests/notebooks \
	tests/exercises/test_chapters.py tests/lab/test_demos.py tests/test_dependencies.py \
	tests/test_twins_missing.py
test-fast: $(TEST_STAMP)
	$(BIN)/python -m pytest -n auto dltutor tools tests $(addprefix --ignore=,$(FAST_SKIPS)) \
	  -o addopts="-ra --doctest-modules -p no:cacheprovider"

# Every claim a chapter makes about PyTorch or Paddle, run in PyTorch and Paddle themselves
# (tests/frameworks; the register of claims is checked by tests/notebooks/test_claims.py).
# --dist loadfile: a file's tests share a worker, so test_twins.py runs each chapter's twins once.
test-frameworks: $(FW_STAMP)
	$(FW_BIN)/python -m pytest tests/frameworks -n 2 --dist loadfile -p no:cacheprovider -o addopts="-ra --doctest-modules"

# The notebooks and doctests again under other OpenBLAS kernels, NumPy's baseline SIMD loops
# and the rounding probe (part of `make test` too; see notebooks/AUTHORING.md).
test-cpus: $(TEST_STAMP)
	$(BIN)/python tests/notebooks/cpu_variants.py
	$(BIN)/python -m pytest -m cpu_variant -ra tests/notebooks/test_every_machine.py

# Rebuild notebooks/NN_name.ipynb from notebooks/src/NN_name.py and execute them (NAMES=01 02
# rebuilds only those). The committed outputs come from this command.
notebooks: $(TEST_STAMP) $(FW_STAMP)
	$(BIN)/python tools/build_notebooks.py $(NAMES)

bench: $(LAB_STAMP)
	$(BIN)/python benchmarks/engine_bench.py

# The website needs only the `site` extra (MkDocs; the test extras include it). The build shows
# its progress (a bar per language) on stderr. REPO=OWNER/NAME (the kit's public GitHub
# repository) adds Binder links to every page.
site: $(SITE_STAMP)
	$(BIN)/python tools/build_site.py site $(if $(REPO),--repo $(REPO))

# The hub load test, on the kit as a school installs it: the wheel (make wheel) with its
# classroom extra in a fresh environment of the hub's own (build/hub-venv), JupyterHub from
# PyPI, configurable-http-proxy from npm (into build/); then 20 students at once on 127.0.0.1
# (classroom/README.md). Not part of `make test`. STUDENTS=4 STEPS=50 for a quick run.
HUB_VENV := build/hub-venv
STUDENTS ?= 20
STEPS ?= 300
$(CHP):
	npm install --silent --prefix build/node configurable-http-proxy@5
classroom-test: wheel $(CHP)
	rm -rf $(HUB_VENV) && $(PYTHON) -m venv $(HUB_VENV)
	$(HUB_VENV)/bin/python -m pip install --quiet "$$(ls -t dist/dltutor-*.whl | head -1)[classroom]"
	timeout 900 $(HUB_VENV)/bin/python classroom/load_test.py --students $(STUDENTS) \
		--steps $(STEPS) --proxy $(CHP)

wheel: $(LAB_STAMP)
	$(BIN)/python -m pip wheel --no-deps --quiet -w dist .
	@ls dist/*.whl

clean:
	rm -rf $(VENV) $(FW_VENV) .pytest_cache .hypothesis
