# The one task runner: the README, CI and developers all call these targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DATA   ?= ../shared/data

.PHONY: setup setup-fast browser run demo example test test-fast lint format eval bench reliability screenshots clean

## setup: the venv with recap, its development tools and the llama.cpp backend (built once),
##        and the browser the web console's tests drive: everything `make test` needs
setup: $(VENV)/.local browser

## setup-fast: the venv for `make test-fast`: no llama.cpp build, no browser
setup-fast: $(VENV)/.dev

$(VENV)/.venv:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	touch $@

# the slim core plus the [server] extra: what `make run` serves
$(VENV)/.server: pyproject.toml $(VENV)/.venv
	$(BIN)/pip install --quiet -e '.[server]'
	touch $@

$(VENV)/.dev: $(VENV)/.server
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

# llama.cpp is compiled for portable x86-64 with AVX2, not for "native": a virtual
# machine's CPU may announce instructions it then refuses (Illegal instruction).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

$(VENV)/.local: $(VENV)/.dev
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet -e '.[dev,dev-local]'
	touch $@

## browser: Debian's chromium, which Playwright drives headless in tests/web (Playwright's
##          own browser downloads are never used); skipped when $(CHROMIUM) is there
CHROMIUM ?= /usr/bin/chromium
SUDO     := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

browser:
	@if [ ! -x $(CHROMIUM) ]; then \
		echo "installing Debian's chromium (for the web console's tests)"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; \
	fi
	@$(CHROMIUM) --version 2>/dev/null  # (Debian's launcher script chatters on stderr)

## run: start the memory service on its embedded defaults (SQLite file recap.db, extractive
##      summarizer, no model) at http://127.0.0.1:8000 — API docs at /docs; Ctrl-C stops it
run: $(VENV)/.server
	$(BIN)/recap serve

## demo: compact the bundled example session with the engine alone (no service)
demo: $(VENV)/.server
	$(BIN)/recap compact examples/incident_session.json --threshold-chars 12000 --keep-chars 4000 \
		-o out/incident_compacted.json --report -
	@echo "compacted history written to out/incident_compacted.json"

## example: the offline LangGraph incident agent (examples/incident_agent); installs the
##          [langgraph] extra it needs (LangGraph and its SQLite checkpointer)
$(VENV)/.langgraph: $(VENV)/.server
	$(BIN)/pip install --quiet -e '.[server,langgraph]'
	touch $@

example: $(VENV)/.langgraph
	mkdir -p out
	$(BIN)/python examples/incident_agent/agent.py --turns 6 --db out/incident_agent.db

## test: lint, type-check and run the whole suite (PostgreSQL, the browser, llama.cpp, the
##       slow runs); what CI runs
test: setup lint
	@$(BIN)/pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: that is a failure here"; exit 1; fi; \
	exit $$rc

## test-fast: the edit-test loop: engine, library, CLI, client and SQLite service tests, in
##            about two minutes, with no PostgreSQL, browser or llama.cpp build
FAST := not postgres and not browser and not slow and not llamacpp
test-fast: setup-fast
	$(BIN)/pytest -q -n 2 -m "$(FAST)"

## screenshots: refresh the console's pictures in docs/screenshots (tests never write them)
screenshots: setup
	RECAP_SCREENSHOTS=$(CURDIR)/docs/screenshots $(BIN)/pytest -q tests/web

lint: setup-fast
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: setup-fast
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## eval: every strategy on LoCoMo, τ-bench and DialogSum (the data beside the checkout):
##       tables, out/<dataset>.json and the retention-vs-budget curves out/<dataset>.png
eval: setup-fast
	mkdir -p out
	for f in locomo_dev.json taubench_airline_dev.json dialogsum.dev.jsonl; do \
		n=$${f%%[._]*}; \
		$(BIN)/recap eval $(DATA)/$$f --out out/$$n.json --plot out/$$n.png || exit 1; \
	done

## bench: the engine's growth and summarization work, recap beside LangChain and LangMem,
##        and the memory service's costs (ratios against baselines of the same run);
##        benchmarks/ is not part of the installed package
bench: setup
	$(BIN)/python -m benchmarks engine --locomo $(DATA)/locomo_dev.json
	$(BIN)/python -m benchmarks peers --data-dir $(DATA)
	$(BIN)/python -m benchmarks service
	$(BIN)/python -m benchmarks proxy

## reliability: 2 servers and 3 workers on one PostgreSQL under load, model faults, a worker
##              killed mid-pass, and its own PostgreSQL restarted (never the machine's); then
##              the embedded deployment (one server on SQLite, killed mid-pass and restarted)
reliability: setup
	$(BIN)/python -m benchmarks reliability
	$(BIN)/python -m benchmarks reliability --database sqlite

clean:
	rm -rf $(VENV) out recap.db recap.db-* .pytest_cache .mypy_cache .ruff_cache .hypothesis
