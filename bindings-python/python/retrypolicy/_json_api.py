"""Calls into the core's JSON API (function name, dict in, dict out) for the dict-shaped APIs."""

from __future__ import annotations

import json
import math
from typing import Any

from . import _lowlevel


def _finite(value: Any) -> Any:
    """``value`` with each NaN or infinite float as text, which the core then rejects naming its
    field (JSON has no such numbers; ``json.dumps`` would write ``NaN``, which is not JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def dumps(document: Any) -> str:
    """JSON text for the core: non-finite floats as text (see ``_finite``)."""
    return json.dumps(_finite(document))


def call(function: str, required: dict[str, Any], **optional: Any) -> dict[str, Any]:
    """Calls a core JSON-API function: ``required`` inputs as given (None stays null), optional
    inputs omitted when None so the core applies its defaults."""
    payload = dict(required)
    payload.update({k: v for k, v in optional.items() if v is not None})
    result: dict[str, Any] = json.loads(_lowlevel.call_json(function, dumps(payload)))
    return result
