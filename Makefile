# hanzilm: every command a reader needs. `make paper` and `make test` set everything up on a fresh machine.
SHELL := /bin/bash
# Python 3.11 to 3.13. Without PYTHON=..., `make install` takes the first of PYTHONS that runs and is one of
# SUPPORTED_PYTHONS. 3.11 comes first because the committed cpu results were made with it: a newer Python gets
# other builds of numpy, torch & co. (same versions), which can move the last digits of a trained model.
SUPPORTED_PYTHONS := 3.11 3.12 3.13
PYTHONS := python3.11 python3.12 python3.13 python3
PYTHON ?=
VENV ?= .venv
PROFILE ?= cpu
ONLY ?=
TORCH_VERSION := 2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.hanzilm-installed

.PHONY: install python paper test book lab clean-book browser pages

# Shell code that sets $py to the interpreter to build the venv with, or fails naming the supported versions.
# It runs each candidate rather than asking `command -v`: a pyenv shim for a version that is installed but not
# enabled is on PATH and fails when run.
define pick_python
py='$(PYTHON)'; \
version_of() { "$$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }; \
if [ -n "$$py" ]; then \
  v=$$(version_of "$$py") || { echo "PYTHON=$$py does not run" >&2; exit 1; }; \
  case " $(SUPPORTED_PYTHONS) " in *" $$v "*) ;; \
    *) echo "PYTHON=$$py is Python $$v; hanzilm supports Python $(SUPPORTED_PYTHONS)" >&2; exit 1;; esac; \
else \
  for c in $(PYTHONS); do \
    v=$$(version_of $$c) || continue; \
    case " $(SUPPORTED_PYTHONS) " in *" $$v "*) py=$$c; break;; esac; \
  done; \
  [ -n "$$py" ] || { echo "need one of Python $(SUPPORTED_PYTHONS) (none of $(PYTHONS) runs as one of them);" \
    "install one, or name it: make install PYTHON=/path/to/python3.12" >&2; exit 1; }; \
fi
endef

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@if [ ! -x $(BIN)/python ]; then $(pick_python); echo "$$py -m venv $(VENV)  # Python $$v"; \
	  "$$py" -m venv $(VENV); fi
	$(BIN)/python -m pip install -q --upgrade pip
	@# torch: the CUDA build only where a GPU is present; otherwise the (much smaller) CPU build
	@if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then \
	  $(BIN)/pip install -q torch==$(TORCH_VERSION); \
	else \
	  $(BIN)/pip install -q torch==$(TORCH_VERSION)+cpu 2>/dev/null || \
	  $(BIN)/pip install -q torch==$(TORCH_VERSION)+cpu --extra-index-url https://download.pytorch.org/whl/cpu || { \
	    echo "no CPU build of torch $(TORCH_VERSION) for this Python: PyPI's build (with CUDA, a few GB; runs on the CPU)"; \
	    $(BIN)/pip install -q torch==$(TORCH_VERSION); }; \
	fi
	$(BIN)/pip install -q -c constraints.txt -e '.[book,test]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# The interpreter `make install` would build a new venv with (PYTHON=... to choose one)
python:
	@$(pick_python); echo "$$py"

# The main job: execute every notebook of the book at PROFILE (default cpu), writing results/<PROFILE>/ (from
# committed code; ALLOW_DIRTY=1 runs uncommitted code, its records marked git_dirty).
paper: install
	$(BIN)/hanzilm paper run --profile $(PROFILE) $(if $(ONLY),--only '$(ONLY)') $(if $(ALLOW_DIRTY),--allow-dirty)

# All tests: unit tests, the nbval regression of the committed smoke notebooks (run with the floating-point code
# paths pinned as the smoke runs pin them: hanzilm.machine), the book build.
test: install
	$(BIN)/python -m pytest -q --durations=10 tests
	# smoke models train afresh in a store of their own (a stored one of older code would hide a change; the
	# user's results/smoke/checkpoints is left as it was)
	store=$$(mktemp -d) && HANZILM_STORE=$$store $(BIN)/python -m hanzilm.machine $(BIN)/python -m pytest -q --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider results/smoke/notebooks; status=$$?; rm -rf $$store; exit $$status
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_versions.py -k smoke_numbers  # the numbers nbval's run just wrote
	git ls-files -z 'results/smoke/*/*.csv' | xargs -0 git checkout -q --  # equal but for the runs' timings: keep the committed ones

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
# typeset. Every page of the book (PAGES=backpack/table1 for some); report in book/_build/pagecheck.json,
# screenshots (1280x900 and full page) in book/_build/screenshots/.
PAGES ?=
pages: book browser
	$(BIN)/python tools/pagecheck.py $(if $(PAGES),$(PAGES:%=book/_build/html/%.html),--book book/_build/html) \
	  --screenshots book/_build/screenshots > book/_build/pagecheck.json
