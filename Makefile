# squidflow — the commands a user types. `make demo` and `make test` are the README's two commands.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# faiss: its CUDA build (requirements-gpu.lock) where an NVIDIA driver is (`nvidia-smi` found) or with `make setup
# FAISS=gpu`; the CPU build of requirements.lock otherwise (FAISS=cpu forces it).
FAISS ?= $(if $(shell command -v nvidia-smi 2>/dev/null),gpu,cpu)
STAMP := $(VENV)/.squidflow-installed-faiss-$(FAISS)
CORES ?= $(shell nproc)
export PATH := $(abspath $(BIN)):$(PATH)
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1

.PHONY: setup system-tools test-tools demo report test test-e2e test-fast test-upstream lint fmt container bench bench-gpu dag docs clean help

help:
	@echo "make setup   create .venv with the pinned dependencies and check ffmpeg/ffprobe"
	@echo "make demo    run the offline demo workflow (config/config.yaml) into results/"
	@echo "make report  after make demo: Snakemake's HTML report of it, results/report.zip"
	@echo "make test    the unit, robustness and workflow tests, on one shared small run (the README's test command)"
	@echo "make test-e2e  the journeys: Slurm, S3, Label Studio, own dataset, takedown, rebuild, deploy, Chromium, wheel"
	@echo "make test-fast  tests/unit and tests/robustness without a Snakemake job: the loop while you code"
	@echo "make lint    ruff, ruff format --check, import-linter, function length, mypy, snakefmt --check, snakemake --lint"
	@echo "make fmt     format Snakefile and workflow/ with snakefmt"
	@echo "make container  regenerate containers/Dockerfile (snakemake --containerize) after changing envs/"
	@echo "make bench   run the benchmarks in benchmarks/ (each figure a ratio against a baseline run beside it)"
	@echo "make bench-gpu  the GPU figures in one table (python -m benchmarks.gpu); says so in one line without CUDA"
	@echo "make dag     draw the rule graph to docs/rulegraph.svg (needs graphviz)"
	@echo "make docs    the import graph (docs/imports.md) and the rule graph (docs/rulegraph.md, .svg), from the code"

setup: $(STAMP) system-tools

# Re-installs only when the dependency pins change, so a second `make setup` is instant.
# PyPI's torch is a CUDA build: torch, triton and the nvidia-* libraries are 5.2 GB of the 7.3 GB venv. pip keeps every
# wheel it downloaded until the whole install ends: in one call the disk held 10.7 GB at the peak. Installed first, on
# their own (pinned, --no-deps: the second call checks their dependencies), their wheels are freed before the rest
# come, and the peak is 8.0 GB; .ci/check-disk.sh stops early, saying so, where less is free.
$(STAMP): pyproject.toml requirements.lock requirements-gpu.lock
	@bash .ci/check-disk.sh $(VENV) 8
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@if [ "$(FAISS)" != gpu ]; then $(BIN)/python -m pip uninstall -q -y faiss-gpu-cu12 2>/dev/null || true; fi
	$(BIN)/python -m pip install -q --no-deps $$(grep -E '^(torch|triton|nvidia-|cuda-)' requirements.lock)
	$(BIN)/python -m pip install -q -r requirements.lock
	@if [ "$(FAISS)" = gpu ]; then \
	  echo "faiss: the CUDA build (requirements-gpu.lock)"; \
	  $(BIN)/python -m pip uninstall -q -y faiss-cpu && $(BIN)/python -m pip install -q -r requirements-gpu.lock; \
	fi
	$(BIN)/python -m pip install -q --no-deps -e .
	@rm -f $(VENV)/.squidflow-installed*
	@touch $@

# ffmpeg/ffprobe are system tools: Debian's package when we may install it, otherwise a message saying how.
system-tools:
	@bash .ci/ensure-apt.sh ffmpeg:ffmpeg,ffprobe

# The HTML task pages are tested in a real headless Chromium.
# The Slurm profile is tested on a real single-node cluster (munge, MariaDB, slurmdbd, slurmctld, slurmd from
# Debian, started by tests/helpers/slurm_cluster.py); without root those tests are skipped, saying why.
# Label Studio (its own venv: its Django pins clash with ours) is installed here, once per version, never in a test.
test-tools: setup
	@bash .ci/ensure-apt.sh chromium:chromium
	@bash .ci/ensure-slurm.sh || echo "note: the Slurm cluster tests will be skipped"
	@cd tests && $(abspath $(BIN))/python -m helpers.label_studio_server --install || echo "note: the Label Studio tests will be skipped"

demo: setup
	$(BIN)/snakemake --profile profiles/default --cores $(CORES)

# Snakemake's HTML report of the finished demo (same profile and config): unzip, open report/report.html.
report: setup
	$(BIN)/snakemake --profile profiles/default --cores $(CORES) --report results/report.zip

# Two tiers (docs/reference.md, "Contributing"). `make test`: tests/unit, tests/robustness and tests/workflow, one
# pytest-xdist worker
# per core, on ONE shared small run, kept in .test-cache/ under a key of every input that can change it
# (tests/helpers/test_cache.py). `make test-e2e`: the journeys of tests/e2e, a test file per worker, two workers whose
# Snakemake runs get a core each (tests/helpers/runs.py: cores), reusing the same small run. Both write every test's duration to .test-cache/durations-<tier>.txt,
# print its top, and start the heaviest tests first on the next run.
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider
test: setup test-tools
	@$(PYTEST) -n auto --maxprocesses 4 --dist loadfile --squidflow-tier test tests/unit tests/robustness tests/workflow; \
	  rc=$$?; echo "slowest tests (.test-cache/durations-test.txt):"; head -15 .test-cache/durations-test.txt 2>/dev/null; exit $$rc

test-e2e: setup test-tools
	@$(PYTEST) -n auto --maxprocesses 2 --dist loadfile --squidflow-tier e2e tests/e2e; \
	  rc=$$?; echo "slowest tests (.test-cache/durations-e2e.txt):"; head -15 .test-cache/durations-e2e.txt 2>/dev/null; exit $$rc

# The loop while coding: tests/unit/ and tests/robustness/ without the tests that run Snakemake jobs (marked slow, or
# asking for the small_workflow fixture) and a few of many seconds each (marked slow, saying why), within 3 minutes
# on 2 cores. tests/workflow/ and tests/e2e/ run in `make test`, and so do those.
# One pytest-xdist worker per core, as in `make test`: most of these tests use one core each.
test-fast: setup
	$(PYTEST) -n auto --maxprocesses 4 --dist loadfile -m "not slow" --durations=10 tests/unit tests/robustness

# The Slurm and report tests on the newest releases of snakemake, snakemake-executor-plugin-slurm and
# snakemake-executor-plugin-slurm-jobstep, in a side venv (UPSTREAM_VENV, default ~/.cache/squidflow/upstream-venv):
# what to run before moving a bound in pyproject.toml (docs/upstream.md). Not in `make test`: it installs from PyPI.
test-upstream: setup test-tools
	bash .ci/test-upstream.sh $(BIN)/python

# ruff (rules and complexity thresholds in pyproject.toml), ruff format --check, import-linter
# (the library's floors: pyproject.toml's contract), no library function over 80 lines (tools/function_length.py;
# with no list of exceptions), snakefmt and Snakemake's own lint. .ci/run runs it
# before the tests.
LINTED := src scripts tests benchmarks tools
lint: setup
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/lint-imports --no-cache
	$(BIN)/python tools/function_length.py
	$(BIN)/mypy
	$(BIN)/snakefmt --check Snakefile workflow/
	$(BIN)/snakemake --lint

# snakefmt (pinned in requirements.lock) at the line length in pyproject.toml's [tool.snakefmt].
fmt: setup
	$(BIN)/ruff format $(LINTED)
	$(BIN)/snakefmt Snakefile workflow/

# Every rule's conda env in one image (docs/cluster-and-storage.md, "Containers"). Where conda is not installed,
# containers/no-conda answers
# the one thing Snakemake asks it here (the platform name).
container: setup
	PATH="$$(command -v conda >/dev/null || echo "$(CURDIR)/containers/no-conda:")$$PATH" \
	  $(BIN)/snakemake --containerize > containers/Dockerfile.new && mv containers/Dockerfile.new containers/Dockerfile

# Each benchmark runs as a module from the repository root (`python -m benchmarks.scale`): the installed library, the
# other benchmarks and tests.helpers are reached so, with no path of their own (benchmarks/__init__.py).
bench: setup
	@for b in benchmarks/*.py; do m=$$(basename $$b .py); case $$m in __init__|gpu) continue;; esac; \
	  echo "== $$b"; $(BIN)/python -m benchmarks.$$m || exit 1; done

bench-gpu: setup
	$(BIN)/python -m benchmarks.gpu

dag: setup
	$(BIN)/python tools/make_docs.py docs --svg

# The generated docs (tools/make_docs.py): the import graph read from the code by the layering test's reader
# (docs/imports.md), config/README.md's reference part from the schema (tools/config_readme.py) and the rule graph as Mermaid text (docs/rulegraph.md); tests/unit/structure/test_docs.py fails
# when they differ from what this writes. Where graphviz is installed it also draws docs/rulegraph.svg (make dag).
docs: setup
	$(BIN)/python tools/make_docs.py docs
	$(BIN)/python tools/config_readme.py

clean:
	rm -rf results logs .snakemake
