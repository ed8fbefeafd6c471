"""Local HTTP and SMTP sinks for notification tests (loopback only, stopped by the test)."""

from __future__ import annotations

import socketserver
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer


class HttpSink:
    def __init__(self) -> None:
        self.bodies: list[str] = []
        self.fail = 0            # answer 500 to this many requests first
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:   # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                if sink.fail:
                    sink.fail -= 1
                    self.send_response(500)
                else:
                    sink.bodies.append(body)
                    self.send_response(200)
                self.end_headers()

            def log_message(self, *a) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/notify"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class SmtpSink:
    """Just enough SMTP (RFC 5321) to accept mail: HELO/EHLO, MAIL, RCPT, DATA, QUIT."""

    def __init__(self) -> None:
        self.mails: list[tuple[str, list[str], str]] = []
        sink = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                def say(line: str) -> None:
                    self.wfile.write((line + "\r\n").encode())
                say("220 sink ready")
                sender, rcpts = "", []
                while True:
                    line = self.rfile.readline().decode().rstrip("\r\n")
                    verb = line[:4].upper()
                    if not line or verb == "QUIT":
                        say("221 bye")
                        return
                    if verb in ("HELO", "EHLO"):
                        say("250 sink")
                    elif verb == "MAIL":
                        sender = line.split(":", 1)[1].strip()
                        say("250 ok")
                    elif verb == "RCPT":
                        rcpts.append(line.split(":", 1)[1].strip())
                        say("250 ok")
                    elif verb == "DATA":
                        say("354 go on")
                        data = []
                        while (l := self.rfile.readline().decode()) not in (".\r\n", ".\n", ""):
                            data.append(l)
                        sink.mails.append((sender, rcpts, "".join(data)))
                        sender, rcpts = "", []
                        say("250 queued")
                    else:
                        say("250 ok")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
