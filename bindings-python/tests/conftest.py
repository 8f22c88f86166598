"""Shared helpers: where the spec fixtures live."""

from __future__ import annotations

import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def fixture_files() -> list[pathlib.Path]:
    """Every fixture file of the corpus, then any under SPEC_FIXTURES_DIR."""
    files = sorted((ROOT / "spec-fixtures" / "cases").rglob("*.json"))
    extra = os.environ.get("SPEC_FIXTURES_DIR")
    if extra:
        folder = pathlib.Path(extra)
        if not folder.is_dir():
            raise RuntimeError(f"SPEC_FIXTURES_DIR {extra} is not a folder")
        files += sorted(folder.rglob("*.json"))
    return files
