# Two entry points that do all set-up on a fresh machine:
#   make demo   - venv + install, rank val with every method, write submission.csv for test
#   make test   - venv + install, run the test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DATA   := data/bliss
HINTS  := $(DATA)/hint_descriptions.csv
STAMP  := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PICTORANK_CACHE_DIR ?= $(CURDIR)/.cache/embeddings

.PHONY: install demo test clean

install: $(STAMP)

# pyproject.toml pins torch==2.13.0, the CPU build on this machine's disk; pip would otherwise
# fetch a CUDA build of several GB.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

demo: install
	$(BIN)/pictorank evaluate --input $(DATA)/val.csv --hints $(HINTS) --method seed
	$(BIN)/pictorank evaluate --input $(DATA)/val.csv --hints $(HINTS) --method cosine
	$(BIN)/pictorank predict --input $(DATA)/test.csv --hints $(HINTS) --method cosine --output submission.csv
	$(BIN)/pictorank validate --submission submission.csv --input $(DATA)/test.csv

test: install
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) .cache .pytest_cache .hypothesis submission.csv
