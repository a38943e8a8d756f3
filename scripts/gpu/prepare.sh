#!/usr/bin/env bash
# GPU check kit, step 1 (on this machine): fetches what the GPU machine cannot (it has no
# network) into the git-ignored folder .gpu-carry/, which travels with the working tree:
#   debs/      the Debian packages the CLI and test build needs (nlohmann-json, CLI11,
#              GoogleTest), unpacked there into a prefix, never into /
#   revision   the git revision, stamped into the build (the copy there has no .git)
# Then prints what to carry and the command to run there. See docs/GPU_CHECK.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
carry=.gpu-carry
packages=(nlohmann-json3-dev libcli11-dev libgtest-dev googletest)

mkdir -p "$carry/debs"
rm -f "$carry"/debs/*.deb
(cd "$carry/debs" && apt-get download "${packages[@]}" >/dev/null)
git describe --always --dirty > "$carry/revision" 2>/dev/null || echo unknown > "$carry/revision"
# A GPU checker's carried lmprof-cli (see check.sh --save-cli) is kept: bench can reuse it.

size=$(du -sk "$carry" | cut -f1)
echo "prepared $carry ($((size / 1024)) MiB):"
ls -1 "$carry"/debs
cat <<MSG

On the GPU machine (device tool), carry ".gpu-carry" and run, in one call (< 10 min):
  bash scripts/gpu/check.sh
or in two calls, the second reusing the first's lmprof-cli (install -m755 \$OUT/lmprof-cli
into .gpu-carry/prebuilt/ between them):
  bash scripts/gpu/check.sh build test --save-cli
  bash scripts/gpu/check.sh bench
Results (report.md, logs, result sets) are written under \$OUT.
MSG
