# `make install` puts holdoff into a virtual environment (.venv) and works on a
# system Python that refuses pip installs (PEP 668); `make dev` adds the dev
# tools and Ray (editable); `make test` runs every test (it does `make dev`
# first if needed). Another interpreter: `make test VENV=/path/to/venv`, or
# `make test PYTHON=python3` to use one that already has holdoff[dev].
SYSTEM_PYTHON ?= python3
VENV ?= .venv
PYTHON ?= $(VENV)/bin/python
PIP ?= $(PYTHON) -m pip
DEV_STAMP := $(VENV)/.holdoff-dev
# `make install` builds the extension profile-guided (scripts/pgo-install.sh)
# when an llvm-profdata of the compiler's LLVM version is found; PGO=0: plain.
PGO ?= 1

.PHONY: help venv install pgo-check dev develop test test-rust test-python lint fmt typecheck bench bench-sweep bench-core fuzz calibrate replay-1g clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(VENV)/bin/python:
	$(SYSTEM_PYTHON) -m venv $(VENV)

venv: $(VENV)/bin/python ## create the virtual environment .venv

install: venv ## user install: holdoff into .venv (a profile-guided build of the Rust extension, PGO=0 for the plain one; no dev tools, no Ray)
	scripts/pgo-install.sh $(PYTHON) $(PGO)
	rm -f $(DEV_STAMP)
	@echo "installed: run .venv/bin/holdoff, or 'source .venv/bin/activate' first"

$(DEV_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PIP) install -e '.[dev,ray]'
	touch $@

dev: $(DEV_STAMP) ## developer install: editable, with the dev tools and Ray, into .venv

pgo-check: venv ## say whether `make install` would build profile-guided, and with which llvm-profdata (installs nothing)
	scripts/pgo-install.sh $(PYTHON) check

develop: ## rebuild the Rust extension after changing Rust code
	$(PIP) install --no-deps -e .

test: $(if $(filter $(VENV)/bin/python,$(PYTHON)),$(DEV_STAMP)) test-rust test-python ## run all tests (Rust core, then Python)

test-rust: ## cargo tests of the core
	cargo test -p holdoff-core --all-targets

test-python: ## pytest (uses the installed extension: `make develop` after Rust changes)
	$(PYTHON) -m pytest -q

replay-1g: ## replay a 1 GB capture written to a temp dir; peak RSS must stay under 200 MB
	HOLDOFF_REPLAY_GB=1 $(PYTHON) -m pytest -q tests/test_replay.py -k memory

lint: $(if $(filter $(VENV)/bin/python,$(PYTHON)),$(DEV_STAMP)) ## formatting, clippy, ruff and mypy
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(PYTHON) -m ruff check python tests
	$(PYTHON) -m ruff format --check python tests
	$(MAKE) typecheck

fmt: ## format Rust and Python code
	cargo fmt --all
	$(PYTHON) -m ruff format python tests
	$(PYTHON) -m ruff check --fix python tests

typecheck: ## mypy --strict on the Python package, stubtest of the native module
	$(PYTHON) -m mypy
	$(PYTHON) -m mypy.stubtest holdoff._core

fuzz: ## the scenario and command-line fuzzers, longer than CI's (CASES=..., MUTATIONS=..., SEED=...)
	$(PYTHON) -m holdoff.fuzz --cases $(or $(CASES),5000) --cli-cases 100000 --mutations $(or $(MUTATIONS),2000) --seed $(or $(SEED),1) --out fuzz-failures

calibrate: ## re-run every profile fit (scripts/calibrate_*.py); each prints its fit and residuals
	@set -e; for f in scripts/calibrate_*.py; do [ -e "$$f" ] || continue; echo "== $$f"; $(PYTHON) "$$f"; done

bench: ## simulated packets per wall second: the bench scenario, then replicated over 1 to 1024 hosts in step and de-phased (50 ms simulated each)
	$(PYTHON) -m holdoff bench --repeat 5
	$(PYTHON) -m holdoff bench --hosts 1,16,64,256,1024 --duration-ms 50 --repeat 3
	$(PYTHON) -m holdoff bench --hosts 1,16,64,256,1024 --duration-ms 50 --repeat 3 --scenario examples/bench-64b-1g-itr8000-napi-poisson.toml

bench-sweep: ## sweep points per second with 1 and 2 worker processes
	$(PYTHON) -m holdoff bench --sweep examples/sweep-bench.toml --workers 1,2 --repeat 3

bench-core: ## criterion benches of the core
	cargo bench -p holdoff-core

clean: ## remove build products
	cargo clean
	rm -rf dist .pytest_cache .ruff_cache .mypy_cache python/holdoff/*.so

distclean: clean ## also remove the virtual environment
	rm -rf $(VENV)
