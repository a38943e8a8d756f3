#!/usr/bin/env bash
# GPU check kit, step 1 (on this machine): fetches what the GPU machine cannot (it has no
# network) into the git-ignored folder .gpu-carry/, which travels with the working tree:
#   debs/      the Debian packages the CLI and test build needs, as listed in
#              scripts/gpu/carried-packages.txt (nlohmann-json, CLI11, GoogleTest, Asio,
#              Gloo's headers), unpacked there into a prefix, never into /
#   imgui-bundle  Dear ImGui's and ImPlot's sources (the chart renderer: the study's charts
#              are drawn there with no display, through EGL), unpacked as the build does
#   revision   the git revision, stamped into the build (the copy there has no .git)
# Then prints what to carry and the command to run there. See docs/GPU_CHECK.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
carry=.gpu-carry
# One list, also read by tests/gpu/carried_headers_check.py (part of the normal suite).
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' \
  scripts/gpu/carried-packages.txt)

mkdir -p "$carry/debs"
rm -f "$carry"/debs/*.deb
(cd "$carry/debs" && apt-get download "${packages[@]}" >/dev/null)
# The pinned version and checksum are third_party/CMakeLists.txt's.
ib_version=$(sed -n 's/.*set(LMPROF_IMGUI_BUNDLE_VERSION "\(.*\)").*/\1/p' third_party/CMakeLists.txt)
ib_sha=$(grep -A1 'set(LMPROF_IMGUI_BUNDLE_SHA256' third_party/CMakeLists.txt | grep -o '"[0-9a-f]*"' | tr -d '"')
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
# The same members as the build unpacks: the stamp then matches and CMake fetches nothing.
read -r -a ib_members < <(sed -n 's/.*set(LMPROF_IMGUI_BUNDLE_MEMBERS \(.*\)).*/\1/p' \
  third_party/CMakeLists.txt) || true # read fails on no line; the check below says why
[ ${#ib_members[@]} -gt 0 ] || { echo "prepare.sh: no LMPROF_IMGUI_BUNDLE_MEMBERS in third_party/CMakeLists.txt" >&2; exit 1; }
"$py" third_party/fetch_sdist.py imgui-bundle "imgui_bundle-$ib_version.tar.gz" "$ib_sha" \
  "$carry/imgui-bundle" "${ib_members[@]}" >/dev/null
git describe --always --dirty > "$carry/revision" 2>/dev/null || echo unknown > "$carry/revision"
# A GPU checker's carried lmprof-cli (see check.sh --save-cli) is kept: bench can reuse it.

size=$(du -sk "$carry" | cut -f1)
echo "prepared $carry ($((size / 1024)) MiB):"
ls -1 "$carry"/debs
echo "imgui-bundle $ib_version (Dear ImGui, ImPlot)"
cat <<MSG

On the GPU machine (device tool), carry ".gpu-carry", in two calls of under 10 minutes:
  bash scripts/gpu/check.sh build test profile lab ddp remote --save-cli
then here: install -m755 <files_at>/lmprof-cli <files_at>/lmprof-engine.so .gpu-carry/prebuilt/,
and there:
  bash scripts/gpu/check.sh bench
(bash scripts/gpu/check.sh alone runs every stage in one call; it fits 10 minutes only with
a small --rounds.)
Results (report.md, logs, result sets) are written under \$OUT.
MSG
