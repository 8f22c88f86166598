"""`import retrypolicy` beside `import tenacity`, in one run (make bench; issue 30): each imported in
fresh interpreters, alternating, with ``-X importtime``; the median of the package's cumulative
import time, and the ratio."""

from __future__ import annotations

import statistics
import subprocess
import sys

ROUNDS = 9


def import_us(module: str) -> int:
    """The cumulative import time of ``module`` (µs) in a fresh interpreter."""
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True, check=True
    ).stderr
    for line in err.splitlines():
        fields = [f.strip() for f in line.split("|")]
        if len(fields) == 3 and fields[2] == module:
            return int(fields[1])
    raise RuntimeError(f"no import time for {module} in: {err[-500:]}")


def main() -> None:
    times: dict[str, list[int]] = {"retrypolicy": [], "tenacity": []}
    for _ in range(ROUNDS):
        for module, kept in times.items():
            kept.append(import_us(module))
    median = {m: statistics.median(t) / 1000 for m, t in times.items()}
    print(f"import time, median of {ROUNDS} fresh interpreters each (alternating):")
    for module, ms in median.items():
        print(f"{module:<12} {ms:6.1f} ms  (range {min(times[module]) / 1000:.1f}-{max(times[module]) / 1000:.1f})")
    print(f"retrypolicy/tenacity = {median['retrypolicy'] / median['tenacity']:.2f} (issue 30 goal <= 1.0)")


if __name__ == "__main__":
    main()
