"""``RetryDecision`` and ``NoRetryDecision``: the two kinds of ``Decision``, for ``isinstance``,
``match`` and type checkers.

At run time every decision is one native class, ``retrypolicy.Decision``; these two classes are
never instantiated, and ``isinstance(d, RetryDecision)`` asks ``d.is_retry``. Type checkers see
``Decision`` as the union ``RetryDecision | NoRetryDecision`` (``_decision.pyi``), so ``if
d.is_retry:`` narrows ``d.delay_ms`` to ``int``.
"""

from __future__ import annotations

from typing import Any

from . import _lowlevel


class _DecisionKind(type):
    """The metaclass whose ``isinstance`` reads the decision's ``is_retry``."""

    _is_retry: bool

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, _lowlevel.Decision) and instance.is_retry is cls._is_retry

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{cls.__name__} is not instantiable: decisions come from decide()")


class RetryDecision(metaclass=_DecisionKind):
    """A decision to retry after ``delay_ms``."""

    _is_retry = True


class NoRetryDecision(metaclass=_DecisionKind):
    """A decision not to retry, and its ``cause``."""

    _is_retry = False
