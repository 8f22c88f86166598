#!/usr/bin/env bash
# Installs what the portable builds need (../shared/TOOLCHAIN.md, "Portable binaries"), each piece
# only when missing: Debian's rustc-web with its std sources (musl and aarch64 std via -Zbuild-std
# or the prebuilt arm64 std), the arm64 architecture, musl, qemu-user-static, cargo-zigbuild, and
# zig (ziglang from PyPI) plus auditwheel in the repository's .venv. Run by `make dist` and the
# dist tests; safe to run again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${VENV:-$root/.venv}

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  dpkg --add-architecture arm64
  apt-get update -qq
fi
need=()
for p in rustc-web cargo-web rust-web-src musl qemu-user-static; do
  dpkg -s "$p" > /dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" > /dev/null
fi
if ! dpkg -s libstd-rust-web-dev:arm64 > /dev/null 2>&1; then
  apt-get install -y -qq --no-install-recommends libstd-rust-web-dev:arm64 > /dev/null
fi
command -v cargo-zigbuild > /dev/null || cargo install cargo-zigbuild --locked --version 0.24.1
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import ziglang, auditwheel' 2> /dev/null ||
  "$venv/bin/pip" install -q --disable-pip-version-check ziglang==0.17.1 auditwheel==6.8.2
# napi build -x wants `zig` on PATH; maturin finds ziglang by itself.
[ -x "$venv/bin/zig" ] ||
  ln -sf "$("$venv/bin/python" -c 'import ziglang, os; print(os.path.dirname(ziglang.__file__))')/zig" "$venv/bin/zig"
echo "setup-cross: rustc-web, musl, qemu-user-static, arm64 std, cargo-zigbuild, zig and auditwheel are in place"
