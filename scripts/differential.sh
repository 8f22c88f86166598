#!/usr/bin/env bash
# The cross-runtime differential test (issue 15): N seeded inputs for decide, the classifiers,
# http_next, mongodb_decide, run (with every rule set, gRPC's and AWS's included), budget_run,
# breaker_run, simulate_storm, grpc_service_config, grpc_retry, grpc_hedge, aws_retry,
# aws_retry_run and aws_rate_limiter_run, valid and invalid, answered by the core's JSON API (the
# reference), then run through every binding's public API by its own fixture runner
# (SPEC_FIXTURES_DIR): Python, Node (native addon), C (shared library), wasm (its module test, and
# the Node suites over the wasm facade). An input passes when every runtime gives the core's whole
# answer (for run, budget_run and breaker_run the summaries every runtime builds, listed in
# wire/examples/differential.rs), or its error code and field. Prints one line per runtime, then
# "N passed, N failed"; exits 1 on any failure.
# Needs every binding built (make test builds them first; make differential builds them itself).
# Usage: scripts/differential.sh N [SEED]
set -euo pipefail
n=${1:?usage: differential.sh N [SEED]}
seed=${2:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The generator is built with make test's debug package set (mk/common.mk's RUST_TEST_PACKAGES,
# passed by the Makefile), so it reuses test-core's build; alone, with the wire crate's.
generator=$(cargo build -q --manifest-path "$root/Cargo.toml" ${RUST_TEST_PACKAGES:--p retrypolicy-wire} \
  --example differential --message-format=json-render-diagnostics | python3 -c '
import json, sys
print(next(m["executable"] for m in map(json.loads, sys.stdin)
           if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "differential" and m["executable"]))')
"$generator" "$work/cases" "$n" "$seed"

# Each runner: a name and a command; its output goes to $work/<name>.out.
run() {
  local name=$1; shift
  local status=0
  (cd "$root" && SPEC_FIXTURES_DIR="$work/cases" "$@") > "$work/$name.out" 2>&1 || status=$?
  local ids
  # A failure line names the case followed by ":", " (" or "]" (passing tests' names end at the id).
  ids=$({ grep -oE 'differential-[a-z-]+-[0-9]+(:| \(|\])' "$work/$name.out" || true; } \
    | sed -E 's/(:| \(|\])$//' | sort -u | tee "$work/$name.ids" | wc -l)
  if [ "$status" -ne 0 ] && [ "$ids" -eq 0 ]; then
    tail -n 30 "$work/$name.out"
    echo "$name: the runner failed without naming a case (exit $status)" >&2
    exit 1
  fi
  printf '%-22s %s inputs disagree with the core\n' "$name:" "$ids"
}

run python .venv/bin/python -m pytest -q -p no:cacheprovider -rf bindings-python/tests/test_spec_fixtures.py
run node node --test bindings-node/test/fixtures.test.mjs
run c bindings-c/build/fixtures-shared spec-fixtures/cases
run wasm node --test bindings-wasm/test/module.test.mjs
run node-api-over-wasm env RETRYPOLICY_BINDING=wasm node --test bindings-node/test/fixtures.test.mjs

failed=$(cat "$work"/*.ids | sort -u | wc -l)
if [ "$failed" -gt 0 ]; then
  for f in "$work"/*.out; do { grep -E 'differential-[a-z-]+-[0-9]+(:| \(|\])' "$f" || true; } | head -n 5 | cut -c1-400; done
  echo "failing inputs are reproduced by: cargo run -p retrypolicy-wire --example differential -- DIR $n $seed" >&2
fi
echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
