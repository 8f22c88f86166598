"""A panic in the native module never crashes the interpreter: pyo3 raises it as PanicException."""

from __future__ import annotations

import pytest

import retrypolicy as rp
from retrypolicy import _lowlevel


def test_a_panic_is_an_exception_and_the_module_keeps_working() -> None:
    # `make test` installs the `testing` feature; without it this test must fail, not skip.
    assert hasattr(_lowlevel, "panic_for_test"), "install with MATURIN_PEP517_ARGS='--features testing' (make install)"
    for _ in range(1000):
        with pytest.raises(BaseException) as e:
            _lowlevel.panic_for_test()
        assert type(e.value).__name__ == "PanicException"
        assert "a panic on purpose" in str(e.value)
    request = rp.Request(rp.Operation.kv("get"), timeout=2.5)
    decision = rp.decide(request, "KV_LOCKED")
    assert decision.action == "retry" and decision.rule == "best_effort_backoff"
