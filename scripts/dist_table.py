"""Prints a table of release artifacts: name, platform tag (from the file name), raw and gzipped size.

Usage: python3 dist_table.py FILE... (any package's artifacts: wheels, sdists, npm tarballs,
archives). The platform tag is the wheel's platform tag, the napi-rs platform named in an npm
tarball's name (linux-x64-gnu, ...), "source" for an sdist or crate, else "any".
"""

from __future__ import annotations

import gzip
import pathlib
import re
import sys

NAPI_PLATFORM = re.compile(
    r"(?:^|-)((?:linux|darwin|win32|freebsd|android)-(?:x64|arm64|ia32|arm|riscv64|s390x|ppc64)"
    r"(?:-(?:gnu|musl|msvc|gnueabihf|musleabihf|eabi))?)-\d"
)


def platform_tag(name: str) -> str:
    """The platform a file is for, read from its name alone."""
    if name.endswith(".whl"):
        # {dist}-{version}(-{build})?-{python}-{abi}-{platform}.whl (PEP 427)
        return name[: -len(".whl")].split("-")[-1]
    napi = NAPI_PLATFORM.search(name)
    if napi:
        return napi.group(1)
    triple = re.search(r"-((?:x86_64|aarch64)-linux-(?:gnu|musl))\.tar\.gz$", name)
    if triple:  # a binary tarball named for its target, e.g. the C library's
        return triple.group(1)
    if name.endswith((".tar.gz", ".crate")):
        return "source"
    return "any"


def human(n: int) -> str:
    """A byte count in B, KiB or MiB, one decimal."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.2f} MiB"


def rows(paths: list[pathlib.Path]) -> list[tuple[str, str, str, str]]:
    """One row per file: name, platform tag, raw size, gzip -9 size."""
    out = []
    for p in sorted(paths, key=lambda p: p.name):
        data = p.read_bytes()
        out.append((p.name, platform_tag(p.name), human(len(data)), human(len(gzip.compress(data, 9, mtime=0)))))
    return out


def main(argv: list[str]) -> int:
    """Prints the table for the files named on the command line."""
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    missing = [a for a in argv if not pathlib.Path(a).is_file()]
    if missing:
        print(f"dist_table: not a file: {', '.join(missing)}", file=sys.stderr)
        return 1
    table = [("artifact", "platform tag", "size", "gzipped")] + rows([pathlib.Path(a) for a in argv])
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    for i, r in enumerate(table):
        print(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]:>{widths[3]}}")
        if i == 0:
            print("  ".join("-" * w for w in widths))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
