#!/usr/bin/env python3
"""Checks that .github/workflows/release.yml builds exactly the targets the packages declare.

The release workflow cannot run here, so this keeps it honest: its wheel targets are the Linux
targets `make dist` cross-builds here (CROSS_TARGETS in mk/common.mk: the wheels of
`make -C bindings-python wheels` and the npm platform packages of `make -C bindings-node npm-packs`)
plus macOS and Windows; its npm targets are `napi.targets` in bindings-node/package.json, whose
Linux ones are the same CROSS_TARGETS, and each has its platform package under bindings-node/npm/
and in optionalDependencies.
Exits 1 naming every difference.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# napi-rs's platform package names for the Rust target triples we ship.
NPM_PLATFORM = {
    "x86_64-unknown-linux-gnu": "linux-x64-gnu",
    "x86_64-unknown-linux-musl": "linux-x64-musl",
    "aarch64-unknown-linux-gnu": "linux-arm64-gnu",
    "aarch64-unknown-linux-musl": "linux-arm64-musl",
    "x86_64-apple-darwin": "darwin-x64",
    "aarch64-apple-darwin": "darwin-arm64",
    "x86_64-pc-windows-msvc": "win32-x64-msvc",
}


def job_targets(workflow: str, job: str) -> list[str]:
    """The `target:` values of one job's matrix, in order."""
    body = re.search(rf"^  {job}:\n(.*?)(?=^  [a-z-]+:\n|\Z)", workflow, re.M | re.S)
    if body is None:
        raise SystemExit(f"release.yml has no job {job!r}")
    return re.findall(r"target: ([\w.-]+)", body.group(1))


def main() -> int:
    workflow = (ROOT / ".github/workflows/release.yml").read_text()
    makefile = (ROOT / "mk/common.mk").read_text()
    cross_targets = re.search(r"^CROSS_TARGETS := (.*)$", makefile, re.M)
    assert cross_targets, "mk/common.mk has no CROSS_TARGETS"
    built_here = cross_targets.group(1).split()
    package = json.loads((ROOT / "bindings-node/package.json").read_text())
    napi_targets = package["napi"]["targets"]
    optional = package.get("optionalDependencies", {})

    problems = []
    wheels, npm = job_targets(workflow, "wheels"), job_targets(workflow, "npm")
    linux = [t for t in wheels if "-linux-" in t]
    if linux != built_here:
        problems.append(f"release wheels on Linux {linux} != mk/common.mk CROSS_TARGETS {built_here}")
    napi_linux = [t for t in napi_targets if "-linux-" in t]
    if sorted(napi_linux) != sorted(built_here):
        problems.append(f"package.json napi.targets on Linux {sorted(napi_linux)} != mk/common.mk CROSS_TARGETS")
    if sorted(npm) != sorted(napi_targets):
        problems.append(f"release npm targets {sorted(npm)} != package.json napi.targets {sorted(napi_targets)}")
    if sorted(wheels) != sorted(npm):
        problems.append(f"the wheels {sorted(wheels)} and npm {sorted(npm)} jobs cover different platforms")
    for target in napi_targets:
        platform = NPM_PLATFORM.get(target)
        if platform is None:
            problems.append(f"napi target {target} has no known npm platform name")
            continue
        if not (ROOT / "bindings-node/npm" / platform / "package.json").is_file():
            problems.append(f"napi target {target}: bindings-node/npm/{platform}/package.json is missing")
        if f"retrypolicy-{platform}" not in optional:
            problems.append(f"napi target {target}: retrypolicy-{platform} is not in optionalDependencies")
    for p in problems:
        print(f"check_release_targets: {p}", file=sys.stderr)
    if not problems:
        print(f"release.yml: {len(wheels)} wheel and {len(npm)} npm targets match the Makefiles and package.json")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
