#!/usr/bin/env bash
# Checks the portable wheels in DIST as a user gets them (issue 19), with no Rust involved:
#  - x86_64 glibc: `pip install --no-index --no-deps` into a fresh venv, then the spec-fixture suite;
#  - aarch64 glibc: imported by Debian's arm64 Python under qemu: one decision, then the suite;
#  - musl (x86_64, and aarch64 under qemu): musl's loader resolves the module's libraries and
#    leaves only Python's own symbols (Py*, _Py*) unresolved. There is no musl Python here.
# Usage: test_wheels.sh DIST CACHE (CACHE keeps the downloaded arm64 .debs between runs).
set -euo pipefail
dist=$(cd "$1" && pwd)
mkdir -p "$2"
cache=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The one wheel in DIST whose platform tag contains $1.
wheel() {
  local found=("$dist"/retrypolicy-*"$1"*.whl)
  [ ${#found[@]} -eq 1 ] && [ -f "${found[0]}" ] || { echo "want one $1 wheel in $dist, found: ${found[*]}" >&2; exit 1; }
  echo "${found[0]}"
}

# Unzips wheel $1 into folder $2 and prints the path of its native module.
unpack() {
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2"
  ls "$2"/retrypolicy/_lowlevel*.so
}

# The arm64 root (Debian's Python 3.11 and musl's loader), extracted once from cached .debs.
arm64_root() {
  local debs=$cache/arm64-debs root=$cache/arm64-root
  if [ ! -f "$root/.complete" ]; then
    mkdir -p "$debs"
    (cd "$debs" && apt-get download -q -o APT::Sandbox::User=root python3.11-minimal:arm64 libpython3.11-minimal:arm64 \
      libpython3.11-stdlib:arm64 libc6:arm64 zlib1g:arm64 libexpat1:arm64 libgcc-s1:arm64 \
      libffi8:arm64 musl:arm64 > /dev/null)
    rm -rf "$root" && mkdir -p "$root"
    for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$root"; done
    touch "$root/.complete"
  fi
  echo "$root"
}

# musl's loader on module $2 ($1 runs it: the loader itself, or qemu plus the loader). The only
# errors allowed are unresolved Python C-API symbols; at least one must be seen (so the check ran).
musl_check() {
  local out bad
  out=$("$@" 2>&1 || true)
  bad=$(grep -v -E '^\s+(\S+ => )?\S+ \(0x[0-9a-f]+\)$|^Error relocating .*: _?Py[A-Za-z0-9_]*: symbol not found$' <<< "$out" || true)
  if [ -n "$bad" ] || ! grep -q 'symbol not found' <<< "$out"; then
    echo "musl loader, unexpected output for ${*: -1}:" >&2
    echo "$out" >&2
    exit 1
  fi
  echo "  $(grep -c 'symbol not found' <<< "$out") Python symbols left to the host, libraries: $(grep '=>' <<< "$out" | awk '{print $1}' | paste -sd' ')"
}

# One decision with RFC 0049's answer (NOT_MY_VBUCKET always retries; the 500 ms best-effort
# delay is capped to the timeout). argv[1]: the machine expected; argv[2:]: put first on sys.path.
decide_py='
import platform, sys
sys.path[:0] = sys.argv[2:]
import retrypolicy
from retrypolicy import Operation, Request, RetryReason
assert platform.machine() == sys.argv[1], platform.machine()
request = Request(Operation.kv("upsert"), attempts=7, elapsed=2.0, timeout=2.5)
decision = retrypolicy.decide(request, RetryReason.KV_NOT_MY_VBUCKET)
assert decision.is_retry and decision.delay_ms == 500 and decision.capped and decision.then_cancel, decision
print("  Python", platform.python_version(), platform.machine(), retrypolicy._lowlevel.__file__, "->", decision)
'

echo "== x86_64 manylinux wheel in a fresh venv, installed with no index and no dependencies"
whl=$(wheel manylinux_2_17_x86_64)
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q --disable-pip-version-check --no-index --no-deps "$whl"
grep -qF "dist/${whl##*/}" "$here/README.md" || { echo "README.md: no install line for dist/${whl##*/}" >&2; exit 1; }
# pytest for the suite, from the same pins as the dev venv (pip's cache makes this quick).
grep -E '^pytest==' "$here/requirements-dev.txt" > "$tmp/pytest.txt"
"$tmp/venv/bin/pip" install -q --disable-pip-version-check -r "$tmp/pytest.txt"
cd "$here/tests"
"$tmp/venv/bin/python" -c 'import sys, retrypolicy._lowlevel as m; assert m.__file__.startswith(sys.prefix), m.__file__; print("  imported", m.__file__)'
"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider test_spec_fixtures.py
# The same abi3 wheel in the other CPython versions at hand, >= 3.10 (ABI3_PYTHONS: their paths).
for other in ${ABI3_PYTHONS:-}; do
  rm -rf "$tmp/other" && "$other" -m venv "$tmp/other"
  "$tmp/other/bin/pip" install -q --disable-pip-version-check --no-index --no-deps "$whl"
  "$tmp/other/bin/python" -c "$decide_py" x86_64
done
[ -n "${ABI3_PYTHONS:-}" ] || echo "  (ABI3_PYTHONS empty: no other CPython version tried)"

root=$(arm64_root)
echo "== aarch64 manylinux wheel under qemu, Debian's arm64 Python 3.11: one decision, the fixture suite"
whl=$(wheel manylinux_2_17_aarch64)
unpack "$whl" "$tmp/a64" > /dev/null
qemu-aarch64-static -L "$root" "$root/usr/bin/python3.11" -S -c "$decide_py" aarch64 "$tmp/a64"
# The fixture suite too, on aarch64: the unzipped wheel first on the path, pytest (pure Python)
# borrowed from the x86_64 venv above, after it.
qemu-aarch64-static -L "$root" "$root/usr/bin/python3.11" -S -c '
import sys
sys.path[:0] = [sys.argv[1], "."]
sys.path.append(sys.argv[2])
import pytest, retrypolicy
assert retrypolicy._lowlevel.__file__.startswith(sys.argv[1]), retrypolicy._lowlevel.__file__
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "test_spec_fixtures.py"]))
' "$tmp/a64" "$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"

echo "== x86_64 musllinux wheel through musl's loader"
whl=$(wheel musllinux_1_2_x86_64)
so=$(unpack "$whl" "$tmp/musl64")
musl_check /lib/ld-musl-x86_64.so.1 --list "$so"

echo "== aarch64 musllinux wheel through musl's arm64 loader under qemu"
whl=$(wheel musllinux_1_2_aarch64)
so=$(unpack "$whl" "$tmp/musla64")
musl_check qemu-aarch64-static -L "$root" "$root/lib/ld-musl-aarch64.so.1" --list "$so"
echo "== every native module is stripped (no symbol table)"
for w in "$dist"/retrypolicy-*.whl; do
  so=$(unpack "$w" "$tmp/strip/${w##*/}")
  if readelf -S --wide "$so" | grep -q '\.symtab'; then echo "not stripped: $w" >&2; exit 1; fi
  echo "  ${w##*/}: $(stat -c %s "$so") bytes"
done
echo "test-wheels: all wheels checked"
