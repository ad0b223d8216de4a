# Two commands matter: `make book` and `make test`. Both set themselves up (an idempotent .venv).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The CPU wheel of torch lies on local disk here; pass it explicitly so nothing resolves a CUDA build.
FIND_LINKS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)
PIP := $(BIN)/python -m pip --disable-pip-version-check -q
JOBS ?= 2
SWEEP ?= notebooks/sweeps/foundations-abduction-error.yaml
export HF_HUB_OFFLINE := 1
# Notebooks run two at a time on two cores with one BLAS/torch thread each. The runner sets this count in
# every kernel and keys its cache on it (a few sums depend on it), so a build never mixes results made
# with different counts; `make book OMP_NUM_THREADS=4` changes it on purpose (and re-runs everything).
export OMP_NUM_THREADS := 1

.PHONY: setup data book notebooks test lab sweep lint clean browser-deps help

help:
	@echo "make book   build the book (executes notebooks at book scale, cached) -> _build/html"
	@echo "make test   run the test suite (notebooks at smoke scale, book build, browser test)"
	@echo "make setup | notebooks | lab | sweep SWEEP=... | lint | clean"

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install $(FIND_LINKS) torch==2.13.0
	$(PIP) install $(FIND_LINKS) -r requirements.txt
	$(PIP) install --no-deps --no-build-isolation -e .
	@touch $(STAMP)

setup: $(STAMP) data

data: $(STAMP)
	@$(BIN)/cflib data fetch

notebooks: setup
	$(BIN)/cflib run --scale book --jobs $(JOBS)

book: setup
	$(BIN)/cflib book --jobs $(JOBS)

browser-deps:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else echo "install Debian's chromium and chromium-driver for the browser test (sudo apt-get install chromium chromium-driver)"; fi; }

# PYTEST_ARGS selects part of the suite (the CI workflow shards the notebooks with it).
PYTEST_ARGS ?=
test: setup browser-deps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# JupyterLab is pinned in requirements.txt with everything else. It refuses to start as root unless told
# (containers and CI runners run as root), so --allow-root is passed only when the user is root.
lab: setup
	$(BIN)/jupyter lab $$([ "$$(id -u)" = 0 ] && echo --allow-root) notebooks/

sweep: setup
	$(BIN)/cflib sweep $(SWEEP)

# The three checks tests/test_checks.py runs in make test (and .pre-commit-config.yaml before a commit).
lint: setup
	$(BIN)/ruff check cflib tests benchmarks
	$(BIN)/ruff format --check cflib tests benchmarks
	$(BIN)/python -m mypy

clean:
	rm -rf _build .pytest_cache
