#!/usr/bin/env bash
# The size floor of the wasm module: the same build, the same wasm-opt passes, with the JSON layer
# cut out (scripts/size-floor.patch says what is cut). It measures how small the module can get
# while it keeps the API's logic and data, before any conversion layer is added. Builds a copy of
# the tracked files (uncommitted edits included) in a temporary directory, which it removes.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && git ls-files -z | xargs -0 cp --parents -t "$work")
(cd "$work" && patch -s -p1 < "$here/scripts/size-floor.patch")
ln -s "$here/node_modules" "$work/bindings-wasm/node_modules"
out=$(make -s -C "$work/bindings-wasm" size 2>&1) || { echo "$out" >&2; exit 1; }
echo "$out" | sed -n 's/^wasm after wasm-opt: /size floor (no JSON layer; scripts\/size-floor.patch): /p'
