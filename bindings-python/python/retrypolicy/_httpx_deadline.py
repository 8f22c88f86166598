"""An httpx transport's attempt ends within its step's ``timeout_ms``, in total, not per read.

httpx has no total timeout: its ``timeout`` bounds each connect, read and write. The async attempt
is cancelled at the step's timeout. The sync one cannot be cancelled, so an ``httpx.HTTPTransport``
(the default) gets a connection pool whose network backend ends every socket operation by what is
left of the attempt (its pool's ``_network_backend`` is the one place every socket call goes
through); any other transport has its own timeouts cut to the step's.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from typing import Any

import httpcore
import httpx

_ATTEMPT_ENDS: contextvars.ContextVar[float | None] = contextvars.ContextVar("retrypolicy_attempt_ends", default=None)
"""When the attempt under way must end (``time.monotonic()`` seconds): read by ``_DeadlineStream``."""


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of the attempt; ``error`` raised when nothing is left."""
    ends = _ATTEMPT_ENDS.get()
    if ends is None:
        return timeout
    left = ends - time.monotonic()
    if left <= 0:
        raise error("retrypolicy: the attempt reached its timeout (the step's timeout_ms)")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read and write ends by the attempt's end (a total, not per read)."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self.stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self.stream.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self.stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend whose connections end every operation by the attempt's end."""

    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self.backend = backend

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None, socket_options: Any = None) -> httpcore.NetworkStream:
        timeout = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self.backend.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> httpcore.NetworkStream:
        timeout = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self.backend.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self.backend.sleep(seconds)


def bound(transport: httpx.BaseTransport) -> None:
    """Gives an ``httpx.HTTPTransport``'s connection pool the deadline-bound backend."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(pool, httpcore.ConnectionPool) and isinstance(backend, httpcore.NetworkBackend):
        if not isinstance(backend, _DeadlineBackend):
            pool._network_backend = _DeadlineBackend(backend)


def _cap(request: httpx.Request, timeout_ms: int) -> None:
    """Cuts the attempt's timeouts (connect, read, write, pool) to ``timeout_ms``."""
    left = timeout_ms / 1000
    timeout = request.extensions.get("timeout") or dict.fromkeys(("connect", "read", "write", "pool"))
    request.extensions["timeout"] = {k: left if v is None else min(v, left) for k, v in timeout.items()}


def send(transport: httpx.BaseTransport, request: httpx.Request, timeout_ms: int | None) -> httpx.Response:
    """One attempt of ``request``, ended within ``timeout_ms`` (when given) by a bound transport."""
    if timeout_ms is None:
        return transport.handle_request(request)
    _cap(request, timeout_ms)
    token = _ATTEMPT_ENDS.set(time.monotonic() + timeout_ms / 1000)
    try:
        return transport.handle_request(request)
    finally:
        _ATTEMPT_ENDS.reset(token)


async def send_async(transport: httpx.AsyncBaseTransport, request: httpx.Request, timeout_ms: int | None) -> httpx.Response:
    """One attempt of ``request``, cancelled at ``timeout_ms`` (when given): ``httpx.TimeoutException``."""
    if timeout_ms is None:
        return await transport.handle_async_request(request)
    _cap(request, timeout_ms)
    try:
        return await asyncio.wait_for(transport.handle_async_request(request), timeout_ms / 1000)
    except asyncio.TimeoutError:
        raise httpx.TimeoutException("retrypolicy: the attempt reached its timeout (the step's timeout_ms)", request=request) from None
