"""A local OpenAI-compatible chat endpoint for tests of the optional LLM tiers (the network boundary we fake).

Start it with the ``local_http_server`` fixture: ``port = local_http_server(ChatHandler, stub)``; the real
``openai`` client then talks to ``http://127.0.0.1:{port}/v1``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any


@dataclass
class ChatStub:
    content: str = "{}"  # the assistant message every completion returns
    status: int = 200  # anything else answers with an OpenAI-style error body
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)  # {"path", "body"} of each request

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]


class ChatHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        stub: ChatStub = self.server.state  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        stub.requests.append({"path": self.path, "body": body})
        if stub.status != 200:
            payload: dict[str, Any] = {"error": {"message": "overloaded", "type": "server_error"}}
        else:
            payload = {
                "id": "c1", "object": "chat.completion", "created": 1, "model": body.get("model"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": stub.content},
                             "finish_reason": "stop"}],
            }  # fmt: skip
        data = json.dumps(payload).encode()
        self.send_response(stub.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
