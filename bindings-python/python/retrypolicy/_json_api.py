"""Calls into the core's JSON API (function name, dict in, dict out) for the dict-shaped APIs."""

from __future__ import annotations

import json
from typing import Any

from . import _lowlevel


def call(function: str, required: dict[str, Any], **optional: Any) -> dict[str, Any]:
    """Calls a core JSON-API function: ``required`` inputs as given (None stays null), optional
    inputs omitted when None so the core applies its defaults."""
    payload = dict(required)
    payload.update({k: v for k, v in optional.items() if v is not None})
    result: dict[str, Any] = json.loads(_lowlevel.call_json(function, json.dumps(payload)))
    return result
