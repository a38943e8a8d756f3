#!/usr/bin/env bash
# The two builds that need no root (docs/INSTALL.md), proved the way a user without root meets
# them, as an unprivileged user. The system's copies of every library LMPROF_DEPS=pypi
# replaces are hidden meanwhile (headers, CMake packages, libraries), so a Debian package
# taken by mistake fails the build.
#   desk  a fresh venv and `pip install ./viewer`; the installed lmprof-cli reads a result
#         set and the installed window opens one under Xvfb
#   node  the engine as a GPU node builds it (cmake --preset node: the torch wheel's
#         LibTorch, every other library from the index, no window); its lmprof-cli runs a
#         step, and a data-parallel step on two Gloo ranks
# As root (CI) it makes the user and hides the packages in a mount namespace of its own; run
# by anyone else it builds as that user and hides nothing, and says so.
#   scripts/rootless.sh [desk|node]...   (default both; CI's stage, scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(desk node)
work=$(mktemp -d /tmp/lmprof-rootless.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
# What LMPROF_DEPS=pypi takes from the package index instead (and GLFW's runtime library).
replaced=(nlohmann-json3-dev libsimdjson-dev libsimdjson14 libcli11-dev libasio-dev
          libgtest-dev libstb-dev libstb0 libglfw3-dev libglfw3 libgloo-dev)
# The folders every package shares: a path directly in one is the package's own.
shared_dirs=(/usr/include /usr/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu/cmake
             /usr/lib/x86_64-linux-gnu/pkgconfig /usr/share/cmake /usr/share/pkgconfig
             /usr/lib/cmake /usr/src)
shared() { local d; for d in "${shared_dirs[@]}"; do [ "$1" = "$d" ] && return 0; done; return 1; }

# The user's part: a venv, the viewer installed into it, and what the user would try first.
cat > "$work/as_user.sh" <<'USER'
set -euo pipefail
src=$1 work=$2
shift 2
export HOME=$work/home PIP_DISABLE_PIP_VERSION_CHECK=1
mkdir -p "$HOME"
fail() { echo "[rootless] $1"; [ -z "${2:-}" ] || tail -n 30 "$2"; exit 1; }

desk() {
  local start=$SECONDS bin=$work/venv/bin
  python3 -m venv "$work/venv"
  "$bin/pip" install -q "$src/viewer" > "$work/pip.log" 2>&1 || fail "pip install ./viewer failed:" "$work/pip.log"
  local took=$((SECONDS - start))
  "$bin/lmprof-cli" --version | grep -q "no engine: a viewer build" || fail "lmprof-cli --version"
  "$bin/lmprof-cli" show "$src/tests/fuzz/corpus/result_set/sweep.json" > "$work/show.txt"
  local glfw
  glfw=$(realpath "$(ldd "$bin/lmprof" | awk '/libglfw/ {print $3}')")
  [ "$glfw" = "$work/venv/lib/lmprof/libglfw.so.3" ] ||
    fail "lmprof does not load the GLFW installed beside it: $(ldd "$bin/lmprof" | grep glfw)"
  LMPROF_CONFIG_DIR=$work/config LIBGL_ALWAYS_SOFTWARE=1 bash "$src/scripts/headless.sh" 1280x720 \
    "$bin/lmprof" --window-size 1280x720 --discard-last --exit-when-done \
    --open "$src/tests/fuzz/corpus/result_set/sweep.json" --screenshot "$work/window.png"
  [ -s "$work/window.png" ] || fail "the installed window took no screenshot"
  printf '[rootless] desk: pip install ./viewer as %s in %d s; lmprof %s, lmprof-cli %s\n' \
    "$(id -un)" "$took" "$(du -h "$bin/lmprof" | cut -f1)" "$(du -h "$bin/lmprof-cli" | cut -f1)"
}

node() {
  local start=$SECONDS build=$work/build-node venv=$work/node-venv
  # The node's venv, with CMake and Ninja from the index. Its torch is the checkout's wheel,
  # reached through a .pth file: pip install -r requirements.txt would fetch the same 5 GB
  # again (and the checkout's venv may run a Python this user cannot execute).
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q cmake ninja > "$work/node.log" 2>&1 || fail "pip install cmake ninja:" "$work/node.log"
  local site
  site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  ls -d "$src"/.venv/lib/python3*/site-packages > "$site/lmprof-checkout-torch.pth"
  (cd "$src" && "$venv/bin/cmake" --preset node -B "$build" -DLMPROF_PYTHON="$venv/bin/python" \
    -DCMAKE_MAKE_PROGRAM="$venv/bin/ninja") >> "$work/node.log" 2>&1 ||
    fail "cmake --preset node failed:" "$work/node.log"
  "$venv/bin/cmake" --build "$build" -j"$(nproc)" >> "$work/node.log" 2>&1 ||
    fail "the node build failed:" "$work/node.log"
  local took=$((SECONDS - start))
  "$build/app/lmprof-cli" run --model tiny --ctx 16 --batch 2 --warmup 1 --steps 2 --device cpu \
    --quiet --json "$work/node.json" > "$work/run.txt" 2>&1 || fail "the node's run failed:" "$work/run.txt"
  grep -q '"status": "ok"' "$work/node.json" || fail "the node's run did not end ok"
  # Two Gloo ranks: LibTorch's own Gloo behind the headers fetched for it agrees with them.
  "$build/app/lmprof-cli" ddp --model tiny --ctx 16 --batch 2 --warmup 1 --steps 2 --device cpu \
    --world-size 2 --strategy flat --quiet --json "$work/ddp.json" > "$work/ddp.txt" 2>&1 ||
    fail "the node's data-parallel run failed:" "$work/ddp.txt"
  grep -q '"status": "ok"' "$work/ddp.json" && grep -q 'identical": true' "$work/ddp.json" ||
    fail "the node's two ranks did not end ok with identical parameters"
  printf '[rootless] node: the engine built as %s in %d s; a run and two Gloo ranks ok\n' \
    "$(id -un)" "$took"
}

for part in "$@"; do
  "$part"
done
USER
if [ "$(id -u)" -ne 0 ]; then
  echo "[rootless] not root: building as $(id -un), with the system's packages in sight" >&2
  bash "$work/as_user.sh" "$src" "$work" "${parts[@]}"
  exit
fi

user=lmprof-rootless
id -u "$user" > /dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
chown "$user" "$work"
# The paths each package adds to a folder others share: hiding them hides the package.
hide=()
for package in "${replaced[@]}"; do
  dpkg-query -W "$package" > /dev/null 2>&1 || continue
  while IFS= read -r path; do
    if shared "$(dirname "$path")" && ! shared "$path" && [ -e "$path" ]; then
      hide+=("$path")
    fi
  done < <(dpkg -L "$package")
done
printf '%s\n' "${hide[@]}" > "$work/hidden"
echo "[rootless] hiding ${#hide[@]} paths of: ${replaced[*]}" >&2
mkdir "$work/empty"
unshare --mount --propagation private bash -c '
  set -euo pipefail
  work=$1 src=$2 user=$3
  while IFS= read -r path; do
    if [ -d "$path" ]; then mount --bind "$work/empty" "$path"; else mount --bind /dev/null "$path"; fi
  done < "$work/hidden"
  shift 3
  runuser -u "$user" -- bash "$work/as_user.sh" "$src" "$work" "$@"
' rootless "$work" "$src" "$user" "${parts[@]}"
