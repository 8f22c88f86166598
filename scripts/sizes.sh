#!/usr/bin/env bash
# The sizes issue 30 budgets, each beside its budget (`make bench` runs this after the bindings'
# benchmarks, whose builds it reuses): the Python wheel for this platform (maturin --release
# --strip, as `make dist` builds it), the package it installs, the Node addon (.node), and the
# README's quickstart C program with libretrypolicy.a linked statically the way pkg-config says
# (libc dynamic, stripped); and the wasm package's two modules after wasm-opt, raw and gzipped
# (gzip -9), the full one and the HTTP-only one (issue 25). A figure over budget prints "missed";
# BENCHMARKS.md ("Sizes") says why.
set -euo pipefail
quiet() { "$@" > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }; }
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

report() { # name bytes budget-bytes
  local verdict=met
  [ "$2" -le "$3" ] || verdict=missed
  awk -v n="$1" -v b="$2" -v k="$3" -v v="$verdict" 'BEGIN { printf "  %-48s %7.1f KB  budget %5d KB: %s\n", n, b / 1000, k / 1000, v }'
}

figure() { # name bytes: a size without a budget of its own
  awk -v n="$1" -v b="$2" 'BEGIN { printf "  %-48s %7.1f KB\n", n, b / 1000 }'
}

echo "sizes (issues 30 and 25):"
# In the Python binding's own target folder (bindings-python/Makefile), where make bench built it.
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target/python}" \
  quiet "$root/.venv/bin/maturin" build --release --strip -m "$root/bindings-python/Cargo.toml" -o "$work/wheels"
wheel=$(ls "$work"/wheels/*.whl)
report "Python wheel ($(basename "$wheel"))" "$(stat -c %s "$wheel")" 700000
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check --no-deps "$wheel"
installed=$(du -sb "$work"/venv/lib/python3*/site-packages/retrypolicy* | awk '{s += $1} END {print s}')
report "Python package installed (site-packages)" "$installed" 1800000

quiet make -s -C "$root/bindings-node" build
node=$(ls "$root"/bindings-node/retrypolicy.*.node)
report "Node addon ($(basename "$node"))" "$(stat -c %s "$node")" 1400000

quiet make -s -C "$root/bindings-c" install DESTDIR="$work/c" PREFIX=/usr/local
export PKG_CONFIG_PATH="$work/c/usr/local/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$work/c"
cc -O2 "$root/bindings-c/examples/quickstart.c" -o "$work/quickstart" $(pkg-config --cflags retrypolicy) \
  -Wl,-Bstatic $(pkg-config --libs retrypolicy) -Wl,-Bdynamic \
  $(pkg-config --static --libs retrypolicy | sed 's/-L[^ ]*//; s/-lretrypolicy//')
strip "$work/quickstart"
report "C quickstart, libretrypolicy.a static, stripped" "$(stat -c %s "$work/quickstart")" 1000000

quiet make -s -C "$root/bindings-wasm" build
for module in "full:pkg:200000" "HTTP-only:pkg-http:80000"; do
  IFS=: read -r name dir budget <<< "$module"
  wasm="$root/bindings-wasm/$dir/web/retrypolicy_wasm_bg.wasm"
  figure "wasm module, $name ($dir/web), raw" "$(stat -c %s "$wasm")"
  report "wasm module, $name ($dir/web), gzipped" "$(gzip -9c "$wasm" | wc -c)" "$budget"
done
