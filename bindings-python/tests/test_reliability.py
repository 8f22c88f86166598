"""Issue 31 and 26 on the Python side: what a caller sends is not lost, no run outlives its
deadline, a failure stays the cause of what its handling raised, a breaker's canary always ends,
and long calls let other threads run."""

from __future__ import annotations

import threading
import time

import retrypolicy as rp


def test_a_long_storm_releases_the_gil_so_another_thread_keeps_running() -> None:
    # 10^5 requests with a retried reason: the core runs for a while; a thread that ticks (and
    # yields at each tick) must advance during the call. With the GIL held it ticks at most once.
    scenario = {
        "request": {"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 0, "timeout_ms": 2500},
        "reason": "KV_TEMPORARY_FAILURE",
        "requests_per_second": 1000,
        "duration_ms": 100_000,
        "latency_ms": 10,
    }
    ticks, stop = [0], threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0)

    thread = threading.Thread(target=tick)
    thread.start()
    try:
        while ticks[0] == 0:
            time.sleep(0.001)
        before = ticks[0]
        report = rp.simulate_storm(scenario)
        during = ticks[0] - before
    finally:
        stop.set()
        thread.join()
    assert report["requests"] == 100_000
    assert during > 50, f"the ticking thread advanced {during} times during the storm"
