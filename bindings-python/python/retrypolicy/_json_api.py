"""Calls into the core's JSON API (function name, dict in, dict out) for the dict-shaped APIs."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from . import _lowlevel
from .errors import InvalidTypeError, OutOfRangeError


#: The deepest nesting of dicts and lists a document may have (serde_json's own recursion limit, as
#: in the Node and wasm packages).
MAX_DEPTH = 128


def _check(value: Any, path: str, root: str = "document", ancestors: set[int] | None = None) -> None:
    """Raises a typed error naming ``path`` for what JSON cannot carry: a NaN or infinite float
    (``OutOfRangeError``), a value that is not a JSON type (``InvalidTypeError``), a dict or list
    that contains itself (``InvalidTypeError``) or nesting deeper than ``MAX_DEPTH``
    (``OutOfRangeError``); ``json.dumps`` would write ``NaN`` (not JSON) or raise a bare
    ``TypeError``, ``ValueError`` or ``RecursionError``. ``root`` names the whole document (as in
    the Node package, a path inside it is not prefixed)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise OutOfRangeError(f"{path}: {value!r} is out of range: expected a finite number", field=path)
    if isinstance(value, (dict, list, tuple)):
        ancestors = set() if ancestors is None else ancestors
        where = path or root
        if id(value) in ancestors:
            raise InvalidTypeError(
                f"{where}: expected a JSON value, found a cyclic {type(value).__name__} (it contains itself)",
                field=where,
            )
        if len(ancestors) >= MAX_DEPTH:
            raise OutOfRangeError(
                f"{where}: nested deeper than {MAX_DEPTH} levels: expected at most {MAX_DEPTH}", field=where
            )
        ancestors.add(id(value))
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise InvalidTypeError(f"{path}: expected text keys, found {type(key).__name__}", field=path)
                _check(item, f"{path}.{key}" if path else key, root, ancestors)
        else:
            for index, item in enumerate(value):
                _check(item, f"{path}[{index}]", root, ancestors)
        ancestors.discard(id(value))
    elif value is not None and not isinstance(value, (str, int, float)):
        raise InvalidTypeError(f"{path}: expected a JSON value, found {type(value).__name__}", field=path)


def dumps(document: Any, root: str = "document") -> str:
    """JSON text for the core, after ``_check``: bad values raise typed errors naming their path
    (``root``, the document's own name, for the document itself)."""
    _check(document, "", root)
    return json.dumps(document)


def call(function: str, required: Mapping[str, object], **optional: Any) -> dict[str, Any]:
    """Calls a core JSON-API function: ``required`` inputs as given (None stays null), optional
    inputs omitted when None so the core applies its defaults."""
    payload = dict(required)
    payload.update({k: v for k, v in optional.items() if v is not None})
    result: dict[str, Any] = json.loads(_lowlevel.call_json(function, dumps(payload)))
    return result
