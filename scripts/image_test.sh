#!/usr/bin/env bash
# Builds the serving image with buildah over a Debian base made by mmdebstrap, starts
# `pictorank serve` inside it on a free 127.0.0.1 port, and checks it over HTTP from outside
# (scripts/image_checks.py); then stops it. No container engine or registry is needed: buildah
# builds and runs with chroot isolation on the host's network.
#
#   scripts/image_test.sh            (or: make image-test)
#
# Needs: buildah and mmdebstrap (apt-get install -y buildah mmdebstrap), models/default (make demo),
# and for the comparison with the model outside the image, pictorank installed on the host
# ($PICTORANK_CLI, default .venv/bin/pictorank; skipped when missing).
# Exit 77 when buildah or mmdebstrap is missing (a skip, said on stderr), 1 when a check fails.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${IMAGE:-localhost/pictorank:test}
BASE=${BASE:-localhost/python:3.11-bookworm}
MODEL=models/default
MAX_IMAGE_MB=${MAX_IMAGE_MB:-800}
TRAINED_IMAGE=${TRAINED_IMAGE:-localhost/pictorank:trained-test}
PICTORANK_CLI=${PICTORANK_CLI:-.venv/bin/pictorank}
WORK=$(mktemp -d)
SERVER_PID=""
CONTAINER=""

say() { printf 'image-test: %s\n' "$*"; }

cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    [ -n "$CONTAINER" ] && buildah rm "$CONTAINER" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT

require_tools() {
    local missing=()
    for tool in buildah mmdebstrap curl python3; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "image-test: skipped: ${missing[*]} not installed (apt-get install -y buildah mmdebstrap curl)" >&2
        exit 77
    fi
    [ -f "$MODEL/ranker.json" ] || { echo "image-test: no $MODEL (make demo trains it)" >&2; exit 1; }
}

# A Debian bookworm root with Python 3.11, imported as an image: no registry is reachable here.
make_base() {
    if buildah inspect --type image "$BASE" >/dev/null 2>&1; then
        say "base image $BASE already there"
        return
    fi
    say "making base image $BASE with mmdebstrap"
    # usrmerge (and the perl it needs, about 50 MB) only converts the layout at install time
    # (usr-is-merged stands in for it); the python:3.11-slim images carry no perl either
    mmdebstrap --quiet --variant=minbase --include=python3,python3-venv,ca-certificates,usr-is-merged \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --customize-hook='chroot "$1" dpkg --purge usrmerge libfile-find-rule-perl libnumber-compare-perl libtext-glob-perl perl libperl5.36 perl-modules-5.36 libgdbm-compat4 >/dev/null' \
        bookworm "$WORK/base.tar"
    local ctr
    ctr=$(buildah from scratch)
    buildah add --quiet "$ctr" "$WORK/base.tar" / >/dev/null
    buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd /bin/bash "$ctr"
    buildah commit --quiet "$ctr" "$BASE" >/dev/null
    buildah rm "$ctr" >/dev/null
}

# What pip inside the build needs from this host: its CA bundle (HTTPS may pass an inspecting
# proxy) and a folder holding the torch CPU wheel (else PyTorch's CPU index is asked).
build_options() {
    local cert wheels
    cert=${PIP_CERT:-$(python3 -m pip config get global.cert 2>/dev/null || true)}
    if [ -n "$cert" ] && [ -f "$cert" ]; then
        echo "--build-arg PIP_CERT=/host-ca.crt -v $cert:/host-ca.crt:ro"
    fi
    for wheels in ${PIP_FIND_LINKS:-} /opt/wheels; do
        if compgen -G "$wheels/torch-2.13.0*cp311*.whl" >/dev/null; then
            echo "--build-arg TORCH_INDEX= --build-arg WHEELS=/wheels -v $wheels:/wheels:ro"
            return
        fi
    done
}

# build_image TAG CONTEXT [build options...]
build_image() {
    local tag=$1 context=$2 started=$SECONDS
    shift 2
    say "building $tag from $context (base $BASE)"
    # shellcheck disable=SC2046  # build_options gives whole words
    # docker format: the OCI one has no HEALTHCHECK.
    buildah bud --quiet --isolation chroot --layers --format docker --build-arg BASE_IMAGE="$BASE" $(build_options) \
        "$@" -t "$tag" "$context" >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; exit 1; }
    say "built in $((SECONDS - started)) s; image size $(buildah images --format '{{.Size}}' "$tag" | head -1)"
}

# A build context with everything the Dockerfile reads but models/default: the image trains its own.
context_without_model() {
    local context="$WORK/context"
    mkdir -p "$context/data"
    cp -r Dockerfile .dockerignore pyproject.toml README.md src "$context/"
    cp -r data/bliss "$context/data/"
    echo "$context"
}

# The image built with no model in its context trains one (a quick one here: no fine-tuning, no
# lexicon) and serves it: ready, and it ranks and suggests.
check_trained_image() {
    local context container
    context=$(context_without_model)
    build_image "$TRAINED_IMAGE" "$context" --build-arg TRAIN_ARGS="--no-finetune --no-lexicon"
    container=$(buildah from "$TRAINED_IMAGE")
    CONTAINER=$container
    start_server
    python3 - "http://127.0.0.1:$PORT" <<'PY'
import json, sys, urllib.request
url = sys.argv[1]
def post(path, body):
    request = urllib.request.Request(url + path, json.dumps(body).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)
health = json.load(urllib.request.urlopen(url + "/health", timeout=10))
assert health["model"].startswith("learned:default"), health
ranked = post("/rank", {"hint_texts": ["flower", "sun"], "options": ["sunflower", "hammer", "river"]})
assert ranked["ranking"][0] == "sunflower", ranked
suggested = post("/suggest", {"word": "umbrella", "top": 1})
assert suggested["suggestions"], suggested
print("image-test: ok   the image built without a model trained one: learned, ranks sunflower first, suggests a clue")
PY
    stop_server
    buildah rm "$container" >/dev/null
    CONTAINER=""
}

stop_server() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

# Nothing of the training stack or the test tools, and no tests, benches or docs.
check_contents() {
    local found
    found=$(buildah run --isolation chroot "$CONTAINER" python -c \
        "import importlib.util as u; print(' '.join(m for m in ('torch', 'transformers', 'sentence_transformers', \
'sklearn', 'pytest', 'playwright', 'schemathesis', 'pip') if u.find_spec(m)))")
    [ -z "$found" ] || { say "FAIL the image holds $found"; exit 1; }
    found=$(buildah run --isolation chroot "$CONTAINER" sh -c 'ls -d /app/tests /app/bench /app/docs /src 2>/dev/null || true')
    [ -z "$found" ] || { say "FAIL the image holds $found"; exit 1; }
    say "ok   no torch, transformers, scikit-learn, pytest, playwright, schemathesis or pip; no tests, benches or docs"
}

# The image's files, counted exactly (buildah's own figure is rounded to a tenth of a GB).
check_size() {
    local root megabytes model_megabytes
    root=$(buildah mount "$CONTAINER")
    megabytes=$(du -sb "$root" | awk '{printf "%.0f", $1 / 1e6}')
    model_megabytes=$(du -sb "$root/app/models/default" | awk '{printf "%.0f", $1 / 1e6}')
    buildah umount "$CONTAINER" >/dev/null
    [ "$megabytes" -le "$MAX_IMAGE_MB" ] || { say "FAIL the image holds $megabytes MB, more than $MAX_IMAGE_MB"; exit 1; }
    say "ok   the image holds $megabytes MB (at most $MAX_IMAGE_MB), $model_megabytes MB of them the model folder"
}

free_port() {
    python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"
}

start_server() {
    PORT=$(free_port)
    say "starting pictorank serve on 127.0.0.1:$PORT"
    local started
    started=$(date +%s.%N)
    buildah run --isolation chroot --network host --env PICTORANK_HOST=127.0.0.1 --env PICTORANK_PORT="$PORT" \
        "$CONTAINER" pictorank serve >"$WORK/serve.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 600); do
        if curl -fsS "http://127.0.0.1:$PORT/ready" >/dev/null 2>&1; then
            say "ready in $(python3 -c "print(f'{$(date +%s.%N) - $started:.1f}')") s; /health: $(curl -fsS "http://127.0.0.1:$PORT/health")"
            return
        fi
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    say "FAIL not ready"; tail -30 "$WORK/serve.log"; exit 1
}

# The server inside (its command line names the image's venv; buildah's own does not).
server_pid() {
    pgrep -n -f "^/opt/venv/bin/python3? /opt/venv/bin/pictorank serve"
}

# The server's user, read from /proc on the host: the chroot shares the host's process table.
check_user() {
    local pid uid
    pid=$(server_pid)
    uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
    [ "$uid" = 10001 ] || { say "FAIL the server runs as uid $uid"; exit 1; }
    say "ok   the server runs as uid $uid (pictorank), not root"
}

# The same model outside the image: its rankings of val's first rows, to compare first places.
expected_rankings() {
    if [ ! -x "$PICTORANK_CLI" ]; then
        say "no $PICTORANK_CLI: skipping the comparison with the model outside the image" >&2
        return
    fi
    head -51 data/bliss/val.csv >"$WORK/val50.csv"
    PICTORANK_CACHE_DIR="$WORK/cache" "$PICTORANK_CLI" predict --quiet --model "$MODEL" --input "$WORK/val50.csv" \
        --hints data/bliss/hint_descriptions.csv --output "$WORK/expected.csv" >/dev/null
    echo "$WORK/expected.csv"
}

main() {
    require_tools
    make_base
    build_image "$IMAGE" .
    CONTAINER=$(buildah from "$IMAGE")
    check_contents
    check_size
    local expected
    expected=$(expected_rankings)
    start_server
    check_user
    python3 scripts/image_checks.py "http://127.0.0.1:$PORT" $expected
    say "server RSS after the checks: $(ps -o rss= -p "$(server_pid)" | awk '{printf "%.0f MB", $1 / 1024}')"
    stop_server
    buildah rm "$CONTAINER" >/dev/null
    CONTAINER=""
    [ -n "${SKIP_TRAINED_IMAGE:-}" ] || check_trained_image
}

main "$@"
