#!/usr/bin/env python3
"""The root README's "Wrap a call" programs are the ones each binding's README opens with, which
that binding's tests run against local servers: every ```python and ```js block of the root section
must appear verbatim in the "Wrap a call" section of bindings-python/README.md or
bindings-node/README.md. Exits 1 naming the block that drifted."""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = {"python": ROOT / "bindings-python/README.md", "js": ROOT / "bindings-node/README.md"}


def section(text: str, heading: str = "## Wrap a call") -> str:
    """The text from `heading` to the next second-level heading."""
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def blocks(text: str, lang: str) -> list[str]:
    """The fenced code blocks of `lang` in `text`."""
    return re.findall(r"```" + lang + r"\n(.*?)```", text, re.S)


def main() -> int:
    root = section((ROOT / "README.md").read_text())
    failures, checked = [], 0
    for lang, source in SOURCES.items():
        theirs = blocks(section(source.read_text()), lang)
        for block in blocks(root, lang):
            checked += 1
            if block not in theirs:
                failures.append(f"README.md: a {lang} block of 'Wrap a call' is not in {source.relative_to(ROOT)}")
    if checked < 2:
        failures.append(f"README.md: 'Wrap a call' holds {checked} python/js blocks, expected at least 2")
    for f in failures:
        print(f, file=sys.stderr)
    print(f"{checked - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
