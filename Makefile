# Developer tasks. `make install` once, then `make test`.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip

.PHONY: help install develop test test-rust test-python lint fmt typecheck bench bench-sweep bench-core clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

install: ## install holdoff editable with the dev tools and Ray (builds the Rust extension)
	$(PIP) install -e '.[dev,ray]'

develop: ## rebuild the Rust extension after changing Rust code
	$(PIP) install --no-deps -e .

test: test-rust test-python ## run all tests (Rust core, then Python)

test-rust: ## cargo tests of the core
	cargo test -p holdoff-core --all-targets

test-python: ## pytest (uses the installed extension: `make develop` after Rust changes)
	$(PYTHON) -m pytest -q

lint: ## formatting, clippy, ruff and mypy
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

bench: ## simulated packets per wall second on the fixed bench scenario
	$(PYTHON) -m holdoff bench --repeat 5

bench-sweep: ## sweep points per second with 1 and 2 worker processes
	$(PYTHON) -m holdoff bench --sweep examples/sweep-bench.toml --workers 1,2 --repeat 3

bench-core: ## criterion benches of the core
	cargo bench -p holdoff-core

clean: ## remove build products
	cargo clean
	rm -rf dist .pytest_cache .ruff_cache .mypy_cache python/holdoff/*.so
