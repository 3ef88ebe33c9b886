"""A small xiaozhi OTA server for the device tests (until the local backend has one): the
check at POST /xiaozhi/ota/ answers whatever the test scripted (one answer per check, the
last one repeating), and POST /xiaozhi/ota/activate answers the scripted statuses (202
until the owner "enters the code", then 200). It records every request's headers and
body. A real http.server on loopback, in a thread (tests.support.firmwareharness.HttpServer)."""

import asyncio
import http.server
import json

from tests.support.firmwareharness import HttpServer, read_body


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


ACTIVATION_MESSAGE = "enter it at xiaozhi.me"


def run_pending_activation(tmp_path, micropython, extra_config, code="731406", activations=2,
                           settle=0.5, timeout=120):
    """Boot the simulated board against an OTA check-in server that hands out a backend's
    WebSocket and an activation code still pending (202 to every activation POST); stop it
    once it has made `activations` POSTs (the code is shown before the first) and `settle`
    seconds more (its screen drawn). Returns the stopped Sim, for its records."""
    from tests.support.firmwareharness import TOKEN, Backend, Sim, run

    async def scenario():
        backend = await Backend().start()
        pending = {"firmware": {"version": "0.0.1", "url": ""},
                   "websocket": {"url": backend.url, "token": TOKEN},
                   "activation": {"message": ACTIVATION_MESSAGE, "code": code,
                                  "challenge": "c-1", "timeout_ms": 30000}}
        with OtaCheckServer([pending], activate_statuses=[202]) as ota:
            sim = Sim(None, tmp_path, micropython=micropython, ota_url=ota.url,
                      extra_config=dict(extra_config, ota_retry=0.2)).start()
            try:
                for _ in range(300):
                    if len(ota.activations) >= activations:
                        break
                    await asyncio.sleep(0.05)
                assert ota.activations
                await asyncio.sleep(settle)
            finally:
                assert sim.stop() == 0
                await backend.stop()
        return sim

    return run(scenario(), timeout=timeout)
