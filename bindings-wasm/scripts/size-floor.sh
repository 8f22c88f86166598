#!/usr/bin/env bash
# The size floor of the wasm module: the same build, the same wasm-opt passes, with the JSON layer
# cut out (scripts/size-floor.patch says what is cut). It measures how small the module can get
# while it keeps the API's logic and data, before any conversion layer is added. Builds a copy of
# the tracked files (uncommitted edits included) in a temporary directory, which it removes; the
# build output goes to target/wasm-size-floor so that the standard library is built once.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && git ls-files -z | xargs -0 cp --parents -t "$work")
# Exact context or nothing: a patch that no longer applies fails here rather than measuring
# something else.
(cd "$work" && git apply "$here/scripts/size-floor.patch")
# The patched readers and writers must be all the JSON there is: no text parsed or printed.
if grep -nE 'serde_json::(from_str|from_slice|to_string|to_vec|to_value)' "$work/core/src/api.rs" "$work/bindings-wasm/src/lib.rs"; then
  echo "size-floor: JSON text or serde output left in the patched API (above); update size-floor.patch" >&2
  exit 1
fi
ln -s "$here/node_modules" "$work/bindings-wasm/node_modules"
out=$(make -s -C "$work/bindings-wasm" size TARGET_DIR="$root/target/wasm-size-floor" 2>&1) || { echo "$out" >&2; exit 1; }
line=$(echo "$out" | sed -n 's/^wasm after wasm-opt: /size floor (no JSON layer; scripts\/size-floor.patch): /p')
[ -n "$line" ] || { echo "$out" >&2; echo "size-floor: no size in the output above" >&2; exit 1; }
echo "$line"
