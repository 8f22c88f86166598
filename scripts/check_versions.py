#!/usr/bin/env python3
"""Every package carries the workspace version: fails naming any manifest that disagrees."""
import json
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
text = (root / "Cargo.toml").read_text()
m = re.search(r'\[workspace\.package\][^\[]*?\nversion\s*=\s*"([^"]+)"', text, re.S)
if not m:
    sys.exit("Cargo.toml: no [workspace.package] version")
version = m.group(1)
problems = []
checked = ["Cargo.toml"]

for manifest in sorted(root.glob("*/Cargo.toml")):
    t = manifest.read_text()
    # fuzz/ is its own workspace of test harnesses, never published.
    if re.search(r"^publish\s*=\s*false", t, re.M) and manifest.parent.name == "fuzz":
        continue
    if re.search(r"^version\.workspace\s*=\s*true", t, re.M) is None:
        problems.append(f"{manifest.relative_to(root)}: does not take version.workspace = true")
    checked.append(str(manifest.relative_to(root)))

pyproject = root / "bindings-python" / "pyproject.toml"
if pyproject.exists():
    t = pyproject.read_text()
    if 'dynamic = ["version"]' not in t and f'version = "{version}"' not in t:
        problems.append("bindings-python/pyproject.toml: version neither dynamic nor " + version)
    checked.append("bindings-python/pyproject.toml")

for pkg in sorted([*root.glob("bindings-*/package.json"), *root.glob("bindings-node/npm/*/package.json")]):
    v = json.loads(pkg.read_text()).get("version")
    if v != version:
        problems.append(f"{pkg.relative_to(root)}: version {v} != {version}")
    checked.append(str(pkg.relative_to(root)))

header = root / "bindings-c" / "include" / "retrypolicy.h"
if header.exists():
    h = header.read_text()
    hv = re.search(r'#define RP_VERSION "([^"]+)"', h)
    if not hv or hv.group(1) != version:
        problems.append(f"bindings-c/include/retrypolicy.h: RP_VERSION {hv and hv.group(1)} != {version}")
    checked.append("bindings-c/include/retrypolicy.h")

changelog = (root / "CHANGELOG.md").read_text()
if f"## {version}" not in changelog and f"## [{version}]" not in changelog:
    problems.append(f"CHANGELOG.md: no section for {version}")

if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"version {version} agrees across: {', '.join(checked)}")
