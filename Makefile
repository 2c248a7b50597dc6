# The one task runner: the README, CI and developers all call these targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DATA   ?= ../shared/data

.PHONY: setup browser run demo test lint format eval bench clean

## setup: the venv with recap and its development tools (builds llama-cpp-python once),
##        and the browser the web console's tests drive
setup: $(VENV)/.dev browser

$(VENV)/.core: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

# llama.cpp is compiled for portable x86-64 with AVX2, not for "native": a virtual
# machine's CPU may announce instructions it then refuses (Illegal instruction).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

$(VENV)/.dev: $(VENV)/.core
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet -e '.[dev]'
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
run: $(VENV)/.core
	$(BIN)/recap serve

## demo: compact the bundled example session with the engine alone (no service)
demo: $(VENV)/.core
	$(BIN)/recap compact examples/incident_session.json --threshold-chars 12000 --keep-chars 4000 \
		-o out/incident_compacted.json --report -
	@echo "compacted history written to out/incident_compacted.json"

## test: lint, type-check and run the whole test suite
test: setup browser lint
	@$(BIN)/pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: that is a failure here"; exit 1; fi; \
	exit $$rc

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## eval: every strategy on LoCoMo, τ-bench and DialogSum (the data beside the checkout):
##       tables, out/<dataset>.json and the retention-vs-budget curves out/<dataset>.png
eval: setup
	mkdir -p out
	for f in locomo_dev.json taubench_airline_dev.json dialogsum.dev.jsonl; do \
		n=$${f%%[._]*}; \
		$(BIN)/recap eval $(DATA)/$$f --out out/$$n.json --plot out/$$n.png || exit 1; \
	done

## bench: the engine's growth and summarization work, recap beside LangChain and LangMem,
##        and the memory service's costs (ratios against baselines of the same run)
bench: setup
	$(BIN)/recap bench engine --locomo $(DATA)/locomo_dev.json
	$(BIN)/recap bench peers --data-dir $(DATA)
	$(BIN)/recap bench service

clean:
	rm -rf $(VENV) out recap.db recap.db-* .pytest_cache .mypy_cache .ruff_cache .hypothesis
