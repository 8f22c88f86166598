# retrypolicy: `make demo` runs the main job, `make test` runs every test.
# Each target installs what it needs, idempotently; see README.md.
include mk/common.mk

.PHONY: demo demo-web test lint test-core test-cli test-fixture-negative test-python test-c test-node test-wasm check-versions bench setup-rust clean

## The main job: the bundled examples as a story (`retrypolicy demo`, cli/src/demo.rs): each scene
## in a sentence, each domain term explained at first use, the command that reproduces it, a table.
demo: setup-rust
	@$(CARGO) build -q --release -p retrypolicy-cli
	@./target/release/retrypolicy demo

## Every test: formatting, lints, the core (with MongoDB's suites, test-core) and its fixtures,
## versions (test-rust); the bindings and the fuzz targets; then the differential test.
test:
	@$(MAKE) --no-print-directory test-lanes
	@$(MAKE) --no-print-directory test-differential
	@echo "make test: all suites passed"

## The Rust suites in order, as one job of test-lanes (test-core runs the CLI's tests too).
RUST_SUITES := lint test-core test-features test-conformance-negative test-fixture-negative check-versions
.PHONY: test-rust test-lanes setup-bindings
test-rust:
	@for t in $(RUST_SUITES); do $(MAKE) --no-print-directory $$t || exit 1; done

## The Rust suites, the four bindings' suites and the fuzz targets, two at a time, each one's output
## printed in one piece when it ends (--output-sync=recurse: a suite is a recursive make). Much of
## each is one core's work (fat-LTO links, wasm-opt, valgrind, pytest, node --test, libFuzzer), so
## two share the 2 cores; the Rust suites and the wasm build (its own toolchain and target folder)
## start first, and the Node suites wait for the wasm ones (Node's backend test loads the wasm
## module, which the wasm build rewrites). A clean run took 860 s so (932 s with only the bindings
## two at a time, 986 s in CI one at a time); later 1,096-1,132 s, and 850 s once the debug builds
## were shared (RUST_TEST_PACKAGES), the fuzz build lost ASan and Python got its own target folder. The set-ups run before, one at a time: apt, rustup and
## npm must not run twice at once. Each binding's Makefile is .NOTPARALLEL, so its own steps keep
## their order.
setup-bindings: setup-rust
	$(MAKE) -C bindings-python venv
	$(MAKE) -C bindings-c deps cbindgen rust-src
	$(MAKE) -C bindings-node deps
	$(MAKE) -C bindings-wasm setup
	$(MAKE) -C fuzz setup

.PHONY: test-node-after-wasm
test-node-after-wasm: test-wasm
	@$(MAKE) --no-print-directory test-node

test-lanes: setup-bindings
	$(MAKE) -j2 --output-sync=recurse test-rust test-wasm test-c test-python test-node-after-wasm test-fuzz

## The edit-compile-test loop: formatting, clippy, the core, wire, CLI and C crate tests (the Rust
## fixture runner and MongoDB's suites among them) and the Python binding's fixture suite: 19 s warm on
## 2 cores (README.md); `make test` stays the full run.
.PHONY: check
check: setup-rust
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) test -q $(RUST_TEST_PACKAGES)
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

## The core's rules, then the wire layer: every spec fixture through the JSON API, typed errors;
## with them the CLI's tests and the C crate's unit tests, in one build (RUST_TEST_PACKAGES).
## The core's tests include `conformance` (below), so `make test` runs MongoDB's suites here, once.
test-core: setup-rust
	$(CARGO) test $(RUST_TEST_PACKAGES)

## The core's rule domains as cargo features (README.md, "Features"; the list is core/Cargo.toml's
## default): the core and the wire crate linted (clippy, every target) with no feature and with each
## feature alone, then the HTTP-only set's tests (the wasm HTTP module's: the core's unit tests and
## every spec fixture, each case of a left-out feature refused with the not-built error naming it).
CORE_FEATURES := $(shell sed -n 's/^default = \[\(.*\)\]/\1/p' core/Cargo.toml | tr -d '",')
.PHONY: test-features
test-features: setup-rust
	$(CARGO) clippy -q -p retrypolicy -p retrypolicy-wire --all-targets --no-default-features -- -D warnings
	for f in $(CORE_FEATURES); do \
	  $(CARGO) clippy -q -p retrypolicy -p retrypolicy-wire --all-targets --no-default-features --features retrypolicy-wire/$$f -- -D warnings || exit 1; done
	$(CARGO) test -q -p retrypolicy -p retrypolicy-wire --no-default-features --features retrypolicy-wire/http --lib --tests

## MongoDB's own test suites (../shared/peer-specs/mongodb, or PEER_SPECS_DIR) replayed against the
## core. They fail when the specs are absent, unless RETRYPOLICY_SKIP_CONFORMANCE=1 says to skip.
.PHONY: conformance test-conformance-negative
conformance: setup-rust
	$(CARGO) test -q $(RUST_TEST_PACKAGES) --test conformance

## The conformance runner fails, naming the folder and PEER_SPECS_DIR, on a specs folder that is
## absent or holds no suite, and skips (saying so) only under RETRYPOLICY_SKIP_CONFORMANCE=1.
test-conformance-negative: setup-rust
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	for specs in "$$d/absent" "$$d"; do \
	  if PEER_SPECS_DIR="$$specs" $(CARGO) test -q $(RUST_TEST_PACKAGES) --test conformance > "$$d/out.txt" 2>&1; then \
	    cat "$$d/out.txt"; echo "conformance passed with PEER_SPECS_DIR=$$specs (no suites)" >&2; exit 1; fi; \
	  grep -q "conformance FAILED: the MongoDB specs folder $$specs " "$$d/out.txt" && grep -q "PEER_SPECS_DIR" "$$d/out.txt" \
	    || { cat "$$d/out.txt"; echo "conformance failed without naming $$specs and PEER_SPECS_DIR" >&2; exit 1; }; \
	done; \
	RETRYPOLICY_SKIP_CONFORMANCE=1 PEER_SPECS_DIR="$$d/absent" $(CARGO) test -q $(RUST_TEST_PACKAGES) --test conformance > "$$d/out.txt" 2>&1 \
	  || { cat "$$d/out.txt"; echo "conformance failed under RETRYPOLICY_SKIP_CONFORMANCE=1" >&2; exit 1; }; \
	grep -q "skipped the MongoDB suites because RETRYPOLICY_SKIP_CONFORMANCE=1" "$$d/out.txt" \
	  || { cat "$$d/out.txt"; echo "conformance did not say it skipped" >&2; exit 1; }; \
	echo "conformance: fails on an absent or empty specs folder, naming it; skips only when told to"

## The CLI's tests alone (make test runs them in test-core).
test-cli: setup-rust
	$(CARGO) test $(RUST_TEST_PACKAGES) --test cli --bins

## The Rust fixture runner must fail on a wrong case found through SPEC_FIXTURES_DIR (mk/common.mk).
test-fixture-negative: setup-rust
	$(call negative_fixture_check,$(CARGO) test -q $(RUST_TEST_PACKAGES) --test spec_fixtures,the Rust fixture runner)

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
## the classifiers, http_next, mongodb_decide, run (gRPC and AWS rules included), budgets, breakers,
## storms, and gRPC's and AWS's six functions (grpc_service_config, grpc_retry, grpc_hedge,
## aws_retry, aws_retry_run, aws_rate_limiter_run) through Python, Node, C and wasm, each compared
## with the core's answer (scripts/differential.sh). In `make test` it runs after the binding suites,
## which build every binding; `make differential N=100000` builds them itself.
DIFFERENTIAL_N ?= 2000
N ?= 100000
SEED ?= 1
.PHONY: test-differential differential
test-differential: setup-rust
	RUST_TEST_PACKAGES="$(RUST_TEST_PACKAGES)" scripts/differential.sh $(DIFFERENTIAL_N) $(SEED)

differential: setup-rust
	$(MAKE) -C bindings-python install
	$(MAKE) -C bindings-c build programs
	$(MAKE) -C bindings-node build
	$(MAKE) -C bindings-wasm build
	RUST_TEST_PACKAGES="$(RUST_TEST_PACKAGES)" scripts/differential.sh $(N) $(SEED)

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
test-fuzz: setup-rust
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
	scripts/sizes.sh

clean:
	$(CARGO) clean
