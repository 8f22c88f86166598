"""Shared helpers: where the spec fixtures live, and a clock for the runners."""

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


class MsClock:
    """A monotonic clock that only sleeps move, in whole ms (below 1 s: ``ms / 1000 * 1000`` is exact)."""

    def __init__(self) -> None:
        self.ms = 0

    def clock(self) -> float:
        return self.ms / 1000

    def sleep(self, seconds: float) -> None:
        self.ms += round(seconds * 1000)

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)
