# Two entry points that do all set-up on a fresh machine:
#   make demo   - venv + install, train models/default if needed, rank val with every method
#                 (reports/val), write submission.csv for test with the learned model
#   make test   - venv + install, check the import layers, run the test suite
#   make test-fast - the same without the tests that load the real model or drive a browser
#   make image-test - build the serving image with buildah and check it over HTTP (docs/deploy.md)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DATA   := data/bliss
HINTS  := $(DATA)/hint_descriptions.csv
STAMP  := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PICTORANK_CACHE_DIR ?= $(CURDIR)/.cache/embeddings
# Python keeps the modules it compiles (__pycache__) unless PYTHONDONTWRITEBYTECODE says not to; with
# it set, and the venv installed --no-compile, every process (the tests start many servers and CLIs)
# compiles pictorank and its dependencies anew. The targets here let Python keep them.
unexport PYTHONDONTWRITEBYTECODE

REPORT := reports/val
.PHONY: install demo test test-fast lint-imports clean report submission image-test

install: $(STAMP)

# Everything: serving, the `train` extra (torch==2.13.0 pinned: the CPU build on this machine's
# disk; pip would otherwise fetch a CUDA build of several GB) and the test tools.
# uv installs it: the same versions pip resolves, unpacked in parallel instead of one wheel after
# another (torch alone is 700 MB). pip installs uv itself, pinned. uv does not read pip's settings,
# so it is handed pip's find-links (where the CPU build of torch lies); where uv cannot be had or
# fails (an index only pip knows), pip installs everything. Neither compiles the modules: Python
# compiles those it imports, on first use.
UV         := uv==0.13.9
FIND_LINKS ?= $(or $(PIP_FIND_LINKS),$(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null))
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	{ $(BIN)/python -m pip install --quiet $(UV) && \
	  $(BIN)/uv pip install --quiet --python $(BIN)/python $(foreach dir,$(FIND_LINKS),--find-links $(dir)) -e '.[train,test]'; } || \
	{ echo "install: uv did not install, pip installs instead" >&2 && \
	  $(BIN)/python -m pip install --quiet --upgrade pip && $(BIN)/python -m pip install --quiet --no-compile -e '.[train,test]'; }
	touch $@

# The default learned model is retrained only when the training files or the modules it is made
# of change (training is slow, the clue-giver's fit included; fine-tuned encoders
# are cached in PICTORANK_CACHE_DIR).
MODEL     := models/default
MODEL_SRC := $(wildcard src/pictorank/*.py src/pictorank/encoders/*.py src/pictorank/features/*.py src/pictorank/ranker/*.py src/pictorank/train/*.py \
                       src/pictorank/suggest/*.py src/pictorank/lexicon/*.py src/pictorank/lexicon/wordnet/*)

$(MODEL)/ranker.json: $(STAMP) $(DATA)/train.csv $(DATA)/val.csv $(HINTS) $(MODEL_SRC)
	$(BIN)/pictorank train --train $(DATA)/train.csv --val $(DATA)/val.csv --hints $(HINTS) --out $(MODEL)

# `report` prints the table `pictorank evaluate` would for each method (one process, instead of one
# per method, each importing torch and loading the encoders again), then the paired tests. It and
# `submission` read the finished model and nothing of each other's, so they run side by side, each
# one's output printed whole as it ends.
demo: install $(MODEL)/ranker.json
	$(MAKE) --no-print-directory --jobs=2 --output-sync=target report submission
	$(BIN)/pictorank validate --submission submission.csv --input $(DATA)/test.csv

# submission.csv for test with the learned model, trained first if needed (`make demo` validates it after).
submission: install $(MODEL)/ranker.json
	$(BIN)/pictorank predict --input $(DATA)/test.csv --hints $(HINTS) --model $(MODEL) --output submission.csv

# Every method side by side on val, as $(REPORT)/report.html; the learned model joins when trained.
report: install
	$(BIN)/pictorank compare --input $(DATA)/val.csv --hints $(HINTS) --methods seed cosine \
		$(if $(wildcard $(MODEL)/ranker.json),--models $(MODEL)) --report $(REPORT) --quiet

# Imports must only run downward (the layers in pyproject.toml): a new circle fails here.
lint-imports: install
	$(BIN)/lint-imports

test: lint-imports
	$(BIN)/python -m pytest -q -n auto

test-fast: lint-imports
	$(BIN)/python -m pytest -q -n auto -m "not slow and not browser"

# The serving image built with buildah over a Debian base and checked over HTTP (scripts/image_test.sh);
# it serves $(MODEL), trained first when missing (not retrained), and compares its rankings with the same model here.
image-test: install
	test -f $(MODEL)/ranker.json || $(MAKE) --no-print-directory $(MODEL)/ranker.json
	PICTORANK_CLI=$(BIN)/pictorank bash scripts/image_test.sh

clean:
	rm -rf $(VENV) .cache .pytest_cache .hypothesis submission.csv reports
