"""A small xiaozhi OTA server for the device tests (until the local backend has one): the
check at POST /xiaozhi/ota/ answers whatever the test scripted (one answer per check, the
last one repeating), and POST /xiaozhi/ota/activate answers the scripted statuses (202
until the owner "enters the code", then 200). It records every request's headers and
body. A real http.server on loopback, in a thread (tests.support.firmware_harness.HttpServer)."""

import http.server
import json

from tests.support.firmware_harness import HttpServer, read_body


class OtaCheckServer(HttpServer):
    def __init__(self, answers, activate_statuses=(200,)):
        super().__init__(_OtaCheckHandler)
        self.answers = list(answers)  # dicts (sent as JSON), str (sent as is) or int (status)
        self.activate_statuses = list(activate_statuses)
        self.checks = []  # (headers dict, body dict or text) per check
        self.activations = []  # (headers dict, body text)

    @property
    def url(self):
        return self.base + "/xiaozhi/ota/"

    def next_answer(self):
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    def next_activation(self):
        if len(self.activate_statuses) > 1:
            return self.activate_statuses.pop(0)
        return self.activate_statuses[0]


class _OtaCheckHandler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        owner = self.server.owner
        body = read_body(self).decode()
        headers = dict(self.headers)
        if self.path.rstrip("/").endswith("/activate"):
            owner.activations.append((headers, body))
            self._answer(owner.next_activation(), "{}")
            return
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = body
        owner.checks.append((headers, parsed))
        answer = owner.next_answer()
        if isinstance(answer, int):
            self._answer(answer, '{"error": "scripted"}')
        else:
            self._answer(200, answer if isinstance(answer, str) else json.dumps(answer))

    def _answer(self, status, text):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass
