"""Calls into the core's JSON API (function name, dict in, dict out) for the dict-shaped APIs."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from . import _lowlevel
from .errors import InvalidTypeError, OutOfRangeError


def _check(value: Any, path: str) -> None:
    """Raises a typed error naming ``path`` for what JSON cannot carry: a NaN or infinite float
    (``OutOfRangeError``), or a value that is not a JSON type (``InvalidTypeError``); ``json.dumps``
    would write ``NaN`` (not JSON) or raise a bare ``TypeError``."""
    if isinstance(value, float) and not math.isfinite(value):
        raise OutOfRangeError(f"{path}: {value!r} is out of range: expected a finite number", field=path)
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidTypeError(f"{path}: expected text keys, found {type(key).__name__}", field=path)
            _check(item, f"{path}.{key}" if path else key)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check(item, f"{path}[{index}]")
    elif value is not None and not isinstance(value, (str, int, float)):
        raise InvalidTypeError(f"{path}: expected a JSON value, found {type(value).__name__}", field=path)


def dumps(document: Any) -> str:
    """JSON text for the core, after ``_check``: bad values raise typed errors naming their path."""
    _check(document, "")
    return json.dumps(document)


def call(function: str, required: Mapping[str, object], **optional: Any) -> dict[str, Any]:
    """Calls a core JSON-API function: ``required`` inputs as given (None stays null), optional
    inputs omitted when None so the core applies its defaults."""
    payload = dict(required)
    payload.update({k: v for k, v in optional.items() if v is not None})
    result: dict[str, Any] = json.loads(_lowlevel.call_json(function, dumps(payload)))
    return result
