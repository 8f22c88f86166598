"""The README's "Wrap a call" snippets, each run as the complete program it is (``__name__ ==
"__main__"``) against a local server on 127.0.0.1: one answering 503, 503, then 200 (three
requests, success), one answering 429 with ``Retry-After: 1`` then 200 (success, after asking the
sleep for at least one second: the sleep is recorded, not wall time)."""

from __future__ import annotations

import http.server
import pathlib
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def wrap_a_call_blocks() -> list[str]:
    """The python blocks of the README's "Wrap a call" section."""
    section = README.read_text().split("## Wrap a call\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2, "Wrap a call has the runner's and the httpx transport's programs"
    return blocks


class Handler(http.server.BaseHTTPRequestHandler):
    """Answers each request with the next of the server's scripted (status, headers)."""

    protocol_version = "HTTP/1.1"
    server: Server

    def do_GET(self) -> None:
        self.server.requests += 1
        status, headers = self.server.answers.pop(0)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    answers: list[tuple[int, dict[str, str]]]
    requests: int


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server(("127.0.0.1", 0), Handler)
    srv.answers, srv.requests = [], 0
    thread = threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


SCRIPTS = {
    "503-503-200": [(503, {}), (503, {}), (200, {})],
    "429-retry-after-1-then-200": [(429, {"Retry-After": "1"}), (200, {})],
}


@pytest.mark.parametrize("block", [0, 1], ids=["runner", "httpx"])
@pytest.mark.parametrize("script", list(SCRIPTS))
def test_wrap_a_call_program_against_a_local_server(
    server: Server, script: str, block: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server.answers = list(SCRIPTS[script])
    monkeypatch.setenv("SERVICE_URL", f"http://127.0.0.1:{server.server_address[1]}/")
    sleeps: list[float] = []
    monkeypatch.setattr(time, "sleep", sleeps.append)  # the programs' default sleep, recorded
    program = wrap_a_call_blocks()[block]
    exec(compile(program, "README.md", "exec"), {"__name__": "__main__"})
    out = capsys.readouterr().out.strip()
    assert out == ("b'ok'" if block == 0 else "200")
    assert server.requests == len(SCRIPTS[script]) and server.answers == []
    if script == "429-retry-after-1-then-200":
        assert len(sleeps) == 1 and sleeps[0] >= 1.0
    else:
        assert len(sleeps) == 2 and all(0 < s < 1.0 for s in sleeps)
