#!/usr/bin/env bash
# The window's --connect to a server that is not up yet (issue 58: a watched script still
# importing torch on a cluster's file system): the window opens after 10 s without an
# answer, says what it waits for, and keeps trying every second until the server listens;
# then it runs there. The server starts only once the window has said it waits, so the test
# does not depend on how fast either starts. A server that refuses the token for good is
# not waited for.
# Usage: gui_connect_waits.sh LMPROF LMPROF_CLI WORKDIR PYTHON
set -euo pipefail
headless=$(cd "$(dirname "$0")/../.." && pwd)/scripts/headless.sh
lmprof=$1 cli=$2 work=$3 python=$4
rm -rf "$work" && mkdir -p "$work/server"
export LIBGL_ALWAYS_SOFTWARE=1
port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
token="$work/token"
"$python" -c 'import secrets; print(secrets.token_hex(32))' > "$token" && chmod 600 "$token"
cat > "$work/demo.json" <<'JSON'
{"lmprof_demo": 1, "steps": [
  {"do": "screenshot", "path": "WORK/waiting.png"},
  {"do": "wait", "for": "engine", "timeout_s": 600},
  {"do": "run", "config": {"model": "tiny", "context_length": 16, "batch_size": 2,
                           "warmup_steps": 1, "measure_steps": 2, "device": "cpu"}},
  {"do": "wait", "for": "run", "timeout_s": 600},
  {"do": "screenshot", "path": "WORK/connected.png"}]}
JSON
sed -i "s|WORK|$work|g" "$work/demo.json"

serve_pid="" window_pid=""
cleanup() {
  for pid in $serve_pid $window_pid; do kill "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

LMPROF_CONFIG_DIR="$work/config" "$headless" 1280x720 "$lmprof" \
  --window-size 1280x720 --connect "127.0.0.1:$port" --token-file "$token" \
  --demo "$work/demo.json" --exit-when-done --discard-last > "$work/window.log" 2>&1 &
window_pid=$!
# The window has waited its 10 s and opened, saying so (no clock here: its own line).
until grep -q "no answer yet" "$work/window.log"; do
  kill -0 "$window_pid" 2>/dev/null || { cat "$work/window.log"; echo "the window gave up"; exit 1; }
  sleep 0.2
done
until [ -f "$work/waiting.png" ]; do
  kill -0 "$window_pid" 2>/dev/null || { cat "$work/window.log"; echo "the window ended"; exit 1; }
  sleep 0.2
done
LMPROF_CONFIG_DIR="$work/server" "$cli" serve --listen "127.0.0.1:$port" --token-file "$token" \
  2> "$work/serve.log" &
serve_pid=$!
wait "$window_pid" || { cat "$work/window.log" "$work/serve.log"; echo "the window failed"; exit 1; }
window_pid=""
grep -q "submitted 1 run" "$work/serve.log" || { cat "$work/serve.log"; echo "no run on the server"; exit 1; }
[ -s "$work/connected.png" ] || { echo "no screenshot once connected"; exit 1; }
kill -INT "$serve_pid"; wait "$serve_pid" || true
serve_pid=""

# A server that refuses this window for good (another token) is not waited for.
LMPROF_CONFIG_DIR="$work/server" "$cli" serve --listen "127.0.0.1:$port" --token-file "$token" \
  2> "$work/serve2.log" &
serve_pid=$!
until grep -q "listening on" "$work/serve2.log"; do sleep 0.1; done
"$python" -c 'print("b" * 64)' > "$work/wrong" && chmod 600 "$work/wrong"
if LMPROF_CONFIG_DIR="$work/config2" "$headless" 1280x720 "$lmprof" \
    --connect "127.0.0.1:$port" --token-file "$work/wrong" --exit-when-done \
    > "$work/refused.log" 2>&1; then
  echo "a refused window opened anyway"; exit 1
fi
grep -qi "token" "$work/refused.log" || { cat "$work/refused.log"; echo "the refusal is not named"; exit 1; }
echo "ok: the window waited for the server, ran there, and did not wait on a refusal"
