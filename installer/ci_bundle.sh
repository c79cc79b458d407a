#!/usr/bin/env bash
# Build the offline bundle, unpack the archive as a user would, verify its checksums and
# run both launchers' --self-test with networking disabled for that process.
#
#   installer/ci_bundle.sh [PYTHON]     (default: .venv/bin/python)
#
# Networking is disabled with a new, empty network namespace: `unshare -n` (as root) or
# `unshare -rn` (an unprivileged user namespace). Where neither is allowed the self-test
# still runs: it makes every Python-level internet socket operation raise and fails if
# any was attempted, and this script says which protection was used.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${1:-.venv/bin/python}"

"$python" -m pip install --quiet 'pyinstaller>=6.10'
"$python" installer/build.py --dist installer/dist --work installer/build

echo "== verifying the archive's checksum"
(cd installer/dist && sha256sum -c SHA256SUMS)
archive=$(sed 's/^[0-9a-f]*  //' installer/dist/SHA256SUMS)

unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
tar -xzf "installer/dist/$archive" -C "$unpacked"
bundle=$(find "$unpacked" -mindepth 1 -maxdepth 1 -type d)
echo "== unpacked to $bundle; verifying every file"
(cd "$bundle" && sha256sum -c --quiet SHA256SUMS)

if unshare -n true 2>/dev/null; then
    offline=(unshare -n); how="unshare -n"
elif unshare -rn true 2>/dev/null; then
    offline=(unshare -rn); how="unshare -rn"
else
    offline=(); how="none available: relying on the self-test's own socket guard"
fi
echo "== network namespace: $how"

status=0
for launcher in microagg microagg-desktop; do
    echo "== $launcher --self-test"
    (cd "$unpacked" && env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM \
        ${offline[@]+"${offline[@]}"} "$bundle/$launcher" --self-test) || status=1
done
exit $status
