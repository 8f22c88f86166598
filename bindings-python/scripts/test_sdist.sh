#!/usr/bin/env bash
# Builds the sdist in DIST into a wheel with pip, as a user without a wheel for their platform
# would (it needs Rust; maturin comes from PYTHON's venv, so no network), outside the repository,
# then installs that wheel into a fresh venv and makes one decision with it.
# Usage: test_sdist.sh PYTHON DIST (CARGO_TARGET_DIR, if set, keeps the build between runs).
set -euo pipefail
py=$1
dist=$(cd "$2" && pwd)
tmp=$(mktemp -d)
export PATH="$(dirname "$py"):$PATH"  # maturin's PEP 517 hook runs the `maturin` next to PYTHON
trap 'rm -rf "$tmp"' EXIT

sdists=("$dist"/retrypolicy-[0-9]*.tar.gz)
[ ${#sdists[@]} -eq 1 ] && [ -f "${sdists[0]}" ] || { echo "want one sdist in $dist, found: ${sdists[*]}" >&2; exit 1; }
echo "== pip wheel ${sdists[0]##*/}"
tar -xzf "${sdists[0]}" -C "$tmp"
cd "$tmp"
"$py" -m pip wheel -q --disable-pip-version-check --no-deps --no-index --no-build-isolation -w "$tmp/out" "$tmp"/retrypolicy-*/
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q --disable-pip-version-check --no-index --no-deps "$tmp"/out/retrypolicy-*.whl
"$tmp/venv/bin/python" -c '
import sys
import retrypolicy
from retrypolicy import Operation, Request, RetryReason
assert retrypolicy._lowlevel.__file__.startswith(sys.prefix), retrypolicy._lowlevel.__file__
# RFC 0049: a non-idempotent upsert is never retried after the socket closed while in flight.
decision = retrypolicy.decide(Request(Operation.kv("upsert"), timeout=2.5), RetryReason.SOCKET_CLOSED_WHILE_IN_FLIGHT)
assert decision.action == "no_retry" and decision.cause == "not_idempotent", decision
print("  the wheel built from the sdist decides:", decision)
'
echo "test-sdist: the sdist builds and its wheel works"
