#!/usr/bin/env bash
# Runs a command on a private headless X display (Xvfb) and exits with the command's own
# status, for the window's tests, benches and checks.
#
# Why not xvfb-run: its exit status is its own when its clean-up fails ("problem while
# cleaning up temporary directory" exits 5, which a CI run took for the window's exit
# status), and `-a` picks a display number by looking, which two tests starting at once
# can both pick. Here Xvfb picks a free display itself (-displayfd) and says which, and
# nothing the command leaves behind can change its status.
#
# Usage: scripts/headless.sh WIDTHxHEIGHT COMMAND [ARGS...]
#   The command runs with DISPLAY set; Xvfb ends with it (or with this script, on a signal).
#   Exits 70 when Xvfb cannot start, with its messages on stderr.
set -uo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+x[0-9]+$ ]]; then
  echo "usage: headless.sh WIDTHxHEIGHT COMMAND [ARGS...]" >&2
  exit 64
fi
size=$1
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/lmprof-x.XXXXXX") || exit 70
xvfb=
finish() {
  if [ -n "$xvfb" ]; then
    kill "$xvfb" 2> /dev/null
    wait "$xvfb" 2> /dev/null
  fi
  rm -rf "$dir"
}
trap finish EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
mkfifo "$dir/display"
# Unix socket only; no TCP listener, so no other machine can reach the display.
Xvfb -displayfd 3 -nolisten tcp -screen 0 "${size}x24" 3> "$dir/display" 2> "$dir/xvfb.log" &
xvfb=$!
number=
read -r -t 60 number < "$dir/display"
if ! [[ $number =~ ^[0-9]+$ ]]; then
  echo "headless.sh: Xvfb did not start (no display number within 60 s):" >&2
  cat "$dir/xvfb.log" >&2
  exit 70
fi
DISPLAY=:$number "$@"
status=$?
exit "$status"
