# retrypolicy: `make demo` runs the main job, `make test` runs every test.
# Each target installs what it needs, idempotently; see README.md.
include mk/common.mk

.PHONY: demo demo-web test lint test-core test-cli test-fixture-negative test-python test-c test-node test-wasm check-versions bench setup-rust clean

## The main job: a walkthrough of the bundled scenarios with the `retrypolicy` CLI.
demo: setup-rust
	@$(CARGO) build -q --release -p retrypolicy-cli
	@for f in examples/scenarios/*.json; do echo "\$$ retrypolicy simulate $$f"; ./target/release/retrypolicy simulate "$$f"; echo; done
	@echo '$$ retrypolicy explain  # a KV upsert 2 s into a 2.5 s timeout, 7 retries, NOT_MY_VBUCKET'
	@echo '{"request": {"service": "kv", "operation": "upsert", "attempts": 7, "elapsed_ms": 2000, "timeout_ms": 2500}, "reason": "KV_NOT_MY_VBUCKET"}' | ./target/release/retrypolicy explain
	@echo '$$ retrypolicy decide --operation upsert --timeout-ms 2500 --reason SOCKET_CLOSED_WHILE_IN_FLIGHT'
	@./target/release/retrypolicy decide --operation upsert --timeout-ms 2500 --reason SOCKET_CLOSED_WHILE_IN_FLIGHT
	@echo; echo '$$ retrypolicy mongodb transaction  # withTransaction: a transient error, an unknown commit result, then success'
	@echo '{"events": [{"event": "begin"}, {"event": "callback_raised", "session": "in_progress", "error": {"kind": "server", "code": 112, "labels": ["TransientTransactionError"]}, "elapsed_ms": 10, "random": 0.5}, {"event": "callback_returned", "session": "in_progress"}, {"event": "commit_failed", "error": {"kind": "network", "labels": ["UnknownTransactionCommitResult"]}, "elapsed_ms": 40, "random": 0.5}, {"event": "commit_succeeded"}]}' | ./target/release/retrypolicy mongodb transaction
	@echo; echo '$$ retrypolicy mongodb rewrite  # seed 000: a counter $$inc as two idempotent updates guarded by a pending token'
	@echo '{"filter": {"_id": "2016-05-01"}, "update": {"$$inc": {"counter": 1}}, "upsert": true, "token": {"$$oid": "573a1390f29313caabcd4135"}}' | ./target/release/retrypolicy mongodb rewrite
	@echo; echo '$$ retrypolicy mongodb idempotency  # seed 003: an update that addresses array elements by index, and its safer form'
	@echo '{"op": "updateOne", "filter": {"_id": "A"}, "update": {"$$set": {"images.1.width": 30}}}' | ./target/release/retrypolicy mongodb idempotency
	@echo; echo '$$ retrypolicy http next  # a saga step: 503, then 429 with Retry-After: 2, then 200'
	@for a in '"attempts": 1, "elapsed_ms": 50}, "attempt": {"kind": "response", "status": 503}' \
	          '"attempts": 2, "elapsed_ms": 200}, "attempt": {"kind": "response", "status": 429, "retry_after": "2"}' \
	          '"attempts": 3, "elapsed_ms": 2250}, "attempt": {"kind": "response", "status": 200}'; do \
	  echo "{\"loop\": {\"max_attempts\": 4, \"deadline_ms\": 10000}, \"state\": {$$a}" | ./target/release/retrypolicy http next; done
	@echo; echo '$$ retrypolicy http next  # 429 asking for 3 s with 2.5 s to the deadline: stop now, say when to try again'
	@echo '{"loop": {"deadline_ms": 10000}, "state": {"attempts": 1, "elapsed_ms": 7500}, "attempt": {"kind": "response", "status": 429, "retry_after": "3"}}' | ./target/release/retrypolicy http next
	@echo; echo '$$ retrypolicy run --input examples/runs/http-503-503-200.json  # the run machine every runner loops over: a GET through 503 and 429 (Retry-After: 1)'
	@./target/release/retrypolicy run --input examples/runs/http-503-503-200.json
	@echo; echo '$$ retrypolicy run --input examples/runs/kv-breaker-open.json  # a KV get whose retry waits for the open breaker (no spin, no budget charge)'
	@./target/release/retrypolicy run --input examples/runs/kv-breaker-open.json
	@echo; echo '$$ retrypolicy storm --compare --input examples/storms/kv-get-all-failing.json  # a retry storm, with and without each budget'
	@./target/release/retrypolicy storm --compare --input examples/storms/kv-get-all-failing.json
	@echo; echo '$$ retrypolicy storm --compare --input examples/storms/kv-get-all-failing-with-breaker.json  # the same, behind a circuit breaker'
	@./target/release/retrypolicy storm --compare --input examples/storms/kv-get-all-failing-with-breaker.json

## Every test: formatting, lints, the core (with MongoDB's suites, test-core) and its fixtures, versions.
test: lint test-core test-conformance-negative test-cli test-fixture-negative check-versions test-python test-c test-node test-wasm test-differential test-fuzz
	@echo "make test: all suites passed"

## The edit-compile-test loop: formatting, clippy, the core and wire tests (the Rust fixture runner
## and MongoDB's suites among them) and the Python binding's fixture suite: 23-30 s warm on 2 cores
## (README.md); `make test` stays the full run.
.PHONY: check
check: setup-rust
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) test -q -p retrypolicy -p retrypolicy-wire
	$(MAKE) -C bindings-python test-fixtures
	@echo "make check: passed (make test runs everything)"

setup-rust:
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust (rustup) first" >&2; exit 1; }
	@$(CARGO) fmt --version >/dev/null 2>&1 || rustup component add rustfmt
	@$(CARGO) clippy --version >/dev/null 2>&1 || rustup component add clippy

lint: setup-rust
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -q --no-deps -p retrypolicy -p retrypolicy-wire
	$(CARGO) package -q -p retrypolicy --no-verify --allow-dirty --list > /dev/null

## The core's rules, then the wire layer: every spec fixture through the JSON API, typed errors.
## The core's tests include `conformance` (below), so `make test` runs MongoDB's suites here, once.
test-core: setup-rust
	$(CARGO) test -p retrypolicy -p retrypolicy-wire

## MongoDB's own test suites (../shared/peer-specs/mongodb, or PEER_SPECS_DIR) replayed against the
## core. They fail when the specs are absent, unless RETRYPOLICY_SKIP_CONFORMANCE=1 says to skip.
.PHONY: conformance test-conformance-negative
conformance: setup-rust
	$(CARGO) test -q -p retrypolicy --test conformance

## The conformance runner fails, naming the folder and PEER_SPECS_DIR, on a specs folder that is
## absent or holds no suite, and skips (saying so) only under RETRYPOLICY_SKIP_CONFORMANCE=1.
test-conformance-negative: setup-rust
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	for specs in "$$d/absent" "$$d"; do \
	  if PEER_SPECS_DIR="$$specs" $(CARGO) test -q -p retrypolicy --test conformance > "$$d/out.txt" 2>&1; then \
	    cat "$$d/out.txt"; echo "conformance passed with PEER_SPECS_DIR=$$specs (no suites)" >&2; exit 1; fi; \
	  grep -q "conformance FAILED: the MongoDB specs folder $$specs " "$$d/out.txt" && grep -q "PEER_SPECS_DIR" "$$d/out.txt" \
	    || { cat "$$d/out.txt"; echo "conformance failed without naming $$specs and PEER_SPECS_DIR" >&2; exit 1; }; \
	done; \
	RETRYPOLICY_SKIP_CONFORMANCE=1 PEER_SPECS_DIR="$$d/absent" $(CARGO) test -q -p retrypolicy --test conformance > "$$d/out.txt" 2>&1 \
	  || { cat "$$d/out.txt"; echo "conformance failed under RETRYPOLICY_SKIP_CONFORMANCE=1" >&2; exit 1; }; \
	grep -q "skipped the MongoDB suites because RETRYPOLICY_SKIP_CONFORMANCE=1" "$$d/out.txt" \
	  || { cat "$$d/out.txt"; echo "conformance did not say it skipped" >&2; exit 1; }; \
	echo "conformance: fails on an absent or empty specs folder, naming it; skips only when told to"

test-cli: setup-rust
	$(CARGO) test -p retrypolicy-cli

## The Rust fixture runner must fail on a wrong case found through SPEC_FIXTURES_DIR (mk/common.mk).
test-fixture-negative: setup-rust
	$(call negative_fixture_check,$(CARGO) test -q -p retrypolicy-wire --test spec_fixtures,the Rust fixture runner)

test-python: setup-rust
	$(MAKE) -C bindings-python test

## The C library, its tests, and examples/c/retry_loop.c (the thin loop over rp_run: on its
## simulated clock its whole output is exact, bindings-c/tests/retry_loop.expected).
test-c: setup-rust
	$(MAKE) -C bindings-c test

test-node: setup-rust
	$(MAKE) -C bindings-node test

## The wasm module (every fixture through it, and through the Node package's API suites over the
## Node-compatible facade), and the explorer end to end in headless Chromium.
test-wasm: setup-rust
	$(MAKE) -C bindings-wasm test

## The cross-runtime differential test: DIFFERENTIAL_N seeded inputs (valid and invalid) for decide,
## the classifiers, http_next and mongodb_decide through Python, Node, C and wasm, each compared with
## the core's answer (scripts/differential.sh). In `make test` it runs after the binding suites,
## which build every binding; `make differential N=100000` builds them itself.
DIFFERENTIAL_N ?= 2000
N ?= 100000
SEED ?= 1
.PHONY: test-differential differential
test-differential: setup-rust
	scripts/differential.sh $(DIFFERENTIAL_N) $(SEED)

differential: setup-rust
	$(MAKE) -C bindings-python install
	$(MAKE) -C bindings-c build programs
	$(MAKE) -C bindings-node build
	$(MAKE) -C bindings-wasm build
	scripts/differential.sh $(N) $(SEED)

## Every artifact built here, into dist/, each tested, then one size table (issue 19): abi3 wheels
## (manylinux2014 and musllinux_1_2, x86_64 and aarch64) and the sdist, installed in fresh venvs
## (x86_64 natively, aarch64 under qemu, musl through musl's loader); the npm packages (the main one,
## four Linux platform packages, the wasm package), installed offline and run on x64, on arm64
## under qemu and on the wasm fallback; the C tarball, linked fully static from its own pkg-config.
## About 20 minutes cold (eight cross builds), seconds warm. macOS and Windows come from the release
## workflow (.github/workflows/release.yml, checked against these targets by make test).
.PHONY: dist
dist: setup-rust
	$(MAKE) -C bindings-python test-wheels DIST=$(CURDIR)/dist
	$(MAKE) -C bindings-node test-packs DIST=$(CURDIR)/dist
	$(MAKE) -C bindings-c dist DIST=$(CURDIR)/dist
	@echo; python3 scripts/dist_table.py dist/*

## The libFuzzer targets (fuzz/, nightly toolchain): their regression inputs, then each target for
## 10 s in `make test`, or for SECONDS in `make fuzz SECONDS=600`.
.PHONY: test-fuzz fuzz
test-fuzz:
	$(MAKE) -C fuzz test

fuzz:
	$(MAKE) -C fuzz run SECONDS=$(or $(SECONDS),60)

## Builds the wasm module and serves the browser explorer on 127.0.0.1, printing the URL.
demo-web: setup-rust
	$(MAKE) -C bindings-wasm demo-web

check-versions:
	python3 scripts/check_versions.py
	python3 scripts/check_readme_snippets.py
	python3 scripts/check_release_targets.py

bench: setup-rust
	$(CARGO) bench -q -p retrypolicy --bench decide
	$(CARGO) run -q --release -p retrypolicy-wire --example long_runs
	$(MAKE) -C bindings-python bench
	$(MAKE) -C bindings-c bench
	$(MAKE) -C bindings-node bench
	$(MAKE) -C bindings-wasm bench

clean:
	$(CARGO) clean
