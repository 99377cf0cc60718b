# pictorank HTTP service: `pictorank serve` on port 8000 (POST /rank, /suggest, /v1/rerank, the game
# page, /health, /ready, /metrics), serving models/default: the build context's when it has one,
# else a model trained during the build.
#
#   docker build -t pictorank .
#   docker run --rm -p 8000:8000 pictorank
#
# Stages. `serve` installs what serving needs (`pip install .`: onnxruntime, not torch) into
# /opt/venv. `export` adds the training stack to a copy of it; `model` takes the context's
# models/default or trains one with it. `pruned` trims the serving venv. The runtime stage copies
# the pruned venv, the model folder and the pictogram data, and nothing of the training stack,
# tests, benches or docs.
# scripts/image_test.sh builds it with buildah and checks it over HTTP.

# Any image with python3 (3.11) and its venv module: the image test passes a Debian one.
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS serve
# A CA bundle for pip where HTTPS goes through an inspecting proxy (a path inside the build, e.g. a
# mounted volume); unset, pip uses its own.
ARG PIP_CERT
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN python3 -m venv /opt/venv && /opt/venv/bin/pip install --quiet .

FROM serve AS export
# The training stack, on a copy of the serving venv: the `model` stage trains with it. PyPI's
# Linux torch wheel is a CUDA build of several GB; PyTorch's CPU index has the same version as
# +cpu, which pip prefers. TORCH_INDEX empty and WHEELS a folder holding that wheel (mounted into
# the build) do the same without that index.
ARG PIP_CERT
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ARG WHEELS=
ENV HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PICTORANK_CACHE_DIR=/opt/cache PICTORANK_DATA_DIR=/src/data/bliss
RUN /opt/venv/bin/pip install --quiet ${TORCH_INDEX:+--extra-index-url "$TORCH_INDEX"} \
        ${WHEELS:+--find-links "$WHEELS"} '.[train]'
COPY data/bliss ./data/bliss

FROM export AS model
# models/default from the build context when it has one (the glob lets a context without it build
# too); else trained here on the bundled data, as `make demo` trains it (about 20 minutes on 2
# cores). TRAIN_ARGS adds `pictorank train` options, e.g. "--no-finetune --no-lexicon" for a quick,
# weaker model (the image test's). The clue model is fitted on the bundled train.csv, the one the
# service's clue-giver reads, so /suggest serves it as it is.
ARG TRAIN_ARGS=
COPY README.md model[s] /ctx/models/
RUN rm /ctx/models/README.md && find /ctx/models -mindepth 1 -maxdepth 1 ! -name default -exec rm -rf {} + \
    && if [ -f /ctx/models/default/ranker.json ]; then echo "serving the build context's models/default"; else \
        rm -rf /ctx/models/default && /opt/venv/bin/pictorank train --train data/bliss/train.csv \
            --val data/bliss/val.csv --hints data/bliss/hint_descriptions.csv --out /ctx/models/default $TRAIN_ARGS; \
    fi \
    && rm -rf /ctx/models/default/encoder && chmod -R a+rX /ctx/models
# Served without the fine-tuned encoder's PyTorch weights (encoder/), which only a torch install
# reads: the image runs the ONNX exports, and a load on onnx does not require them.

FROM serve AS pruned
# The runtime installs nothing: pip and setuptools stay behind, and so does hf-xet (the hub's
# download client; nothing is downloaded), scikit-learn and joblib (only fitting uses them; a
# saved clue model is read with numpy), and onnxruntime's export and optimisation tools (it runs
# graphs only). Nor do the libraries' own test suites and type stubs, nor the bytecode caches (a
# sixth of the venv): start-up compiles what it imports, in memory, within the readiness budget.
RUN /opt/venv/bin/python -m pip uninstall --quiet --yes hf-xet scikit-learn joblib pip setuptools wheel 2>/dev/null || true; \
    find /opt/venv -name __pycache__ -type d -prune -exec rm -rf {} + \
    && find /opt/venv/lib/python3*/site-packages -mindepth 2 -name tests -type d -prune -exec rm -rf {} + \
    && find /opt/venv/lib/python3*/site-packages -name '*.pyi' -delete \
    && cd /opt/venv/lib/python3*/site-packages/onnxruntime && rm -rf transformers tools quantization datasets

FROM ${BASE_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    PATH=/opt/venv/bin:$PATH \
    PICTORANK_HOST=0.0.0.0 \
    PICTORANK_PORT=8000 \
    PICTORANK_CACHE_DIR=/app/.cache \
    PICTORANK_DATA_DIR=/app/data/bliss \
    PICTORANK_DEFAULT_MODEL_DIR=/app/models/default
# LightGBM's OpenMP runtime (its wheel does not carry it). The cache folder is the service's to
# write (the model folder's vocabulary vectors at start-up).
# hadolint ignore=DL3008
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends libgomp1 >/dev/null \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/* \
    && useradd --create-home --uid 10001 pictorank \
    && mkdir -p /app/.cache && chown 10001 /app/.cache
WORKDIR /app
COPY --from=pruned /opt/venv /opt/venv
COPY --from=model /ctx/models /app/models
COPY data/bliss /app/data/bliss
USER 10001
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/ready' % os.environ.get('PICTORANK_PORT', '8000'), timeout=4)"]
CMD ["pictorank", "serve"]
