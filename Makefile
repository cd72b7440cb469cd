# hanzilm: every command a reader needs. `make paper` and `make test` set everything up on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
PROFILE ?= cpu
ONLY ?=
TORCH_VERSION := 2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.hanzilm-installed

.PHONY: install paper test book lab clean-book browser pages

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (Python 3.11)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@# torch: the CUDA build only where a GPU is present; otherwise the (much smaller) CPU build
	@if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then \
	  $(BIN)/pip install -q torch==$(TORCH_VERSION); \
	else \
	  $(BIN)/pip install -q torch==$(TORCH_VERSION)+cpu 2>/dev/null || \
	  $(BIN)/pip install -q torch==$(TORCH_VERSION)+cpu --extra-index-url https://download.pytorch.org/whl/cpu; \
	fi
	$(BIN)/pip install -q -c constraints.txt -e '.[book,test]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# The main job: execute every notebook of the book at PROFILE (default cpu), writing results/<PROFILE>/.
paper: install
	$(BIN)/hanzilm paper run --profile $(PROFILE) $(if $(ONLY),--only '$(ONLY)')

# All tests: unit tests, the nbval regression of the committed smoke notebooks, the book build.
test: install
	$(BIN)/python -m pytest -q tests
	$(BIN)/python -m pytest -q --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider results/smoke/notebooks

book: install
	$(BIN)/jupyter-book build book -W -n --keep-going

# root (most containers): JupyterLab refuses to start without --allow-root
lab: install
	$(BIN)/jupyter lab book $(if $(filter 0,$(shell id -u)),--allow-root)

clean-book:
	rm -rf book/_build

# Headless Chromium (Debian's) for `make pages`, and a CJK font so that its screenshots show the Chinese text
browser:
	@command -v chromium >/dev/null && fc-list :lang=zh | grep -q . || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium fonts-noto-cjk; \
	  else echo "need chromium and a CJK font: sudo apt-get install chromium fonts-noto-cjk"; exit 1; fi; }

# The built pages as a reader sees them, offline (tools/pagecheck.py): no sideways scrolling, images load, math
# typeset. Report in book/_build/pagecheck.json, screenshots (1280x900 and full page) in book/_build/screenshots/.
PAGES ?= results_at_a_glance backpack/table2_senses
pages: book browser
	$(BIN)/python tools/pagecheck.py $(PAGES:%=book/_build/html/%.html) --screenshots book/_build/screenshots \
	  > book/_build/pagecheck.json
