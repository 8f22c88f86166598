# Included first by every Makefile here (the root one, bindings-*/ and fuzz/): the shell and
# cargo's settings they all share, and the recipes two of them would otherwise each write.

# The repository's root, wherever the including Makefile is.
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never
# pyo3: build the Python binding the way maturin does, so cargo's builds of it (clippy) and
# maturin's agree (pyo3 rebuilds whenever this variable changes between two builds in one target
# folder: ../shared/TOOLCHAIN.md).
export PYO3_BUILD_EXTENSION_MODULE := 1
# The Python tools (maturin, pytest, mypy; zig and auditwheel for the cross builds).
VENV ?= $(ROOT)/.venv
# Every debug-profile `cargo test` of make test names the same packages, so one build serves them
# all: cargo unifies the dependencies' features (dev-dependencies included) per set of packages,
# and each other set rebuilt serde, the core and the wire crate (a clean make test spent 58 s of
# CPU on the fixture runner's negative check alone, 39 s on the CLI's, 25 s on the C crate's).
RUST_TEST_PACKAGES := -p retrypolicy -p retrypolicy-wire -p retrypolicy-cli -p retrypolicy-c
, := ,

# ---- the negative fixture check ------------------------------------------------------------------
# $(call negative_fixture_check,COMMAND,RUNNER): a fixture runner (COMMAND, which reads extra cases
# from SPEC_FIXTURES_DIR and ends its output with `N passed, N failed`) must fail on a folder whose
# one case is wrong on purpose, name that case, count exactly one failure, and fail on a
# SPEC_FIXTURES_DIR that does not exist. RUNNER names it in the messages.
define negative_fixture_check
@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
printf '%s' '{"schemaVersion":1,"function":"controlled_backoff","source":"negative check","cases":[{"id":"wrong-on-purpose","description":"attempt 0 is 1 ms, not 2","source":"RFC 0049","input":{"attempt":0},"expect":{"delay_ms":2}}]}' > "$$d/wrong.json"; \
if SPEC_FIXTURES_DIR="$$d" $(1) > "$$d/out.txt" 2> "$$d/err.txt"; then \
  cat "$$d/out.txt" "$$d/err.txt"; echo "$(2) passed a wrong expectation" >&2; exit 1; fi; \
if ! grep -q "wrong-on-purpose" "$$d/out.txt" || ! tail -n 1 "$$d/out.txt" | grep -Eq '^[0-9]+ passed, 1 failed$$'; then \
  cat "$$d/out.txt" "$$d/err.txt"; echo "$(2) failed, but not by naming the one wrong case" >&2; exit 1; fi; \
if SPEC_FIXTURES_DIR="$$d/missing" $(1) > "$$d/out.txt" 2>&1; then \
  echo "$(2) accepted a missing SPEC_FIXTURES_DIR" >&2; exit 1; fi; \
echo "negative fixture check: $(2) fails on a wrong case and on a missing folder"
endef

# ---- cross builds (make dist) ----------------------------------------------------------------------
# The four Linux targets built on this x86_64 host, for the Python wheels (bindings-python, maturin)
# and the npm platform packages (bindings-node, napi): zig links them (from the venv, installed by
# scripts/setup-cross.sh), Debian's rustc-web supplies std (../shared/TOOLCHAIN.md, "Portable
# binaries"). What the two recipes share is here; the rest genuinely differs: each tool spells the
# glibc floor its own way (maturin's --compatibility manylinux2014, napi's `.2.17` target suffix),
# napi passes cargo's flags after `--`, and each keeps its own target folder.
# scripts/check_release_targets.py checks release.yml against this list.
CROSS_TARGETS := x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl
# $(call cross_env,TRIPLE): the environment of one cross build: the venv's zig and Debian's cargo
# first on PATH; for musl, RUSTC_BOOTSTRAP for -Zbuild-std.
cross_env = PATH=$(VENV)/bin:/usr/bin:$$PATH $(if $(findstring musl,$(1)),RUSTC_BOOTSTRAP=1)
# $(call build_std,TRIPLE): cargo's flag that builds std from source, for musl (Debian ships no musl
# std; the glibc targets use its prebuilt one).
build_std = $(if $(findstring musl,$(1)),-Zbuild-std=std$(,)panic_abort)
