#!/usr/bin/env bash
# Installs what lmprof needs on a fresh Debian 12 machine and builds it:
#   Debian packages (compiler, CMake, Ninja, GoogleTest, nlohmann-json, simdjson, CLI11, GLFW,
#   Mesa OpenGL, stb, standalone Asio, the DejaVu font, Xvfb for the window's tests, clang with libFuzzer
#   for the fuzz targets, clang-format 14 for the layout check),
#   the pinned torch wheel in a project-local virtual environment (.venv), and the lmprof
#   Python package (python/) into it, editable,
#   then configures and builds with CMake presets.
# Idempotent: steps already done are skipped. Usage: scripts/setup.sh [preset]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"

log() { printf '[setup] %s\n' "$*" >&2; }

# --- Debian packages -------------------------------------------------------------------
packages=(build-essential cmake ninja-build git pkg-config python3 python3-venv
          libgtest-dev nlohmann-json3-dev libsimdjson-dev libcli11-dev
          libglfw3-dev libgl-dev libgl1-mesa-dri libstb-dev fonts-dejavu-core xvfb xauth xdotool
          libegl-dev libopengl-dev libegl-mesa0
          clang clang-format libclang-rt-dev ffmpeg libgloo-dev libasio-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- Python virtual environment with the pinned torch wheel -----------------------------
python_bin="${LMPROF_BOOTSTRAP_PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  log "creating .venv with $("$python_bin" --version)"
  "$python_bin" -m venv .venv
fi
stamp=.venv/.lmprof-requirements
if ! cmp -s requirements.txt "$stamp"; then
  log "installing requirements.txt into .venv (the torch wheel is large; first run takes minutes)"
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -r requirements.txt
  cp requirements.txt "$stamp"
fi

# --- the lmprof Python package (python/), editable, so the checkout's code is what runs ---
if ! .venv/bin/python -c "import lmprof, sys; sys.exit(not lmprof.__file__.startswith('$PWD/python/'))" 2>/dev/null; then
  log "installing the lmprof Python package (python/) into .venv, editable"
  .venv/bin/python -m pip install --quiet --no-build-isolation --no-deps -e python
fi

# --- torch's CUDA must match the toolkit's major version --------------------------------
torch_cuda=$(.venv/bin/python -c "import torch; print(torch.version.cuda or '')")
nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ -x "$nvcc_bin" ]; then
  nvcc_ver=$("$nvcc_bin" --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1.\2/p')
  if [ -n "$torch_cuda" ] && [ "${torch_cuda%%.*}" != "${nvcc_ver%%.*}" ]; then
    log "error: torch was built for CUDA $torch_cuda but nvcc is CUDA $nvcc_ver (major versions differ)"
    exit 1
  fi
  log "torch CUDA $torch_cuda, nvcc CUDA $nvcc_ver"
else
  log "no CUDA toolkit found: building the CPU path only"
fi

# --- configure and build ----------------------------------------------------------------
log "configuring (preset $preset)"
cmake --preset "$preset" >/dev/null
log "building"
cmake --build --preset "$preset" -- -j"${LMPROF_JOBS:-2}"
