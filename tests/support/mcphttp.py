"""What MCP clients exchange with a streamable-HTTP server, kept and checked: HttpTap (an
httpx2 transport for the SDK client that records every request body and each message of
every answer, JSON or SSE) and check_messages (every message the server sent, valid for the
revision in use). The bridge's tests and the board's own HTTP endpoint's use them."""

import json

import mcp_types as types
from mcp_types import methods


class HttpTap:
    """An httpx2 transport for the SDK client that keeps every exchange with the bridge:
    the request body and each message of the answer (JSON, or SSE events, GET streams too)."""

    def __init__(self):
        import httpx2

        self.exchanges = []  # [request body bytes, content type, [response chunks]]
        self.client = httpx2.AsyncClient(transport=self._Transport(self), timeout=httpx2.Timeout(30, read=300))

    class _Transport:
        def __init__(self, tap):
            import httpx2

            self.tap = tap
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request):
            import httpx2

            body = await request.aread()
            response = await self.inner.handle_async_request(request)
            chunks = []
            self.tap.exchanges.append((body, response.headers.get("content-type", ""), chunks))
            inner = response.stream

            class Tee(httpx2.AsyncByteStream):
                async def __aiter__(self):
                    async for chunk in inner:
                        chunks.append(chunk)
                        yield chunk

                async def aclose(self):
                    await inner.aclose()

            return httpx2.Response(response.status_code, headers=response.headers, stream=Tee(),
                                   extensions=response.extensions)

        async def aclose(self):
            await self.inner.aclose()

    def transport(self, url):
        from mcp.client.streamable_http import streamable_http_client

        return streamable_http_client(url, http_client=self.client)

    def lines(self):
        """As check_messages wants them: ("c", what the client sent), ("s", each message back)."""
        out = []
        for body, content_type, chunks in self.exchanges:
            if body:
                out.append(["c", body.decode()])
            text = b"".join(chunks).decode()
            if content_type.startswith("text/event-stream"):
                for event in text.replace("\r\n", "\n").split("\n\n"):
                    data = "\n".join(line[5:].lstrip() for line in event.split("\n") if line.startswith("data:"))
                    if data:
                        out.append(["s", data])
            elif content_type.startswith("application/json") and text:
                out.append(["s", text])
        return out


def server_methods(lines):
    return {json.loads(text).get("method") for direction, text in lines if direction == "s"}


def check_messages(lines):
    """Every message the bridge sent: JSON-RPC, and valid for the revision in use
    (2026-07-28 requests carry it in _meta; older ones: what initialize negotiated)."""
    requests, negotiated, checked = {}, None, 0
    for direction, text in lines:
        message = json.loads(text)
        if direction == "c":
            if "id" in message and "method" in message:
                meta = (message.get("params") or {}).get("_meta") or {}
                requests[message["id"]] = (message["method"], meta.get("io.modelcontextprotocol/protocolVersion"))
            continue
        assert message.get("jsonrpc") == "2.0", text
        if "method" in message:
            version = "2026-07-28" if negotiated is None else negotiated
            if (message.get("params") or {}).get("_meta", {}).get("io.modelcontextprotocol/subscriptionId") \
                    or message["method"] == "notifications/subscriptions/acknowledged":
                version = "2026-07-28"
            methods.parse_server_notification(message["method"], version, message.get("params"))
        elif "error" in message:
            types.JSONRPCError.model_validate(message)
        else:
            method, version = requests[message["id"]]
            if method == "initialize":
                negotiated = message["result"]["protocolVersion"]
            methods.validate_server_result(method, version or negotiated, message["result"])
            if (version or negotiated) == "2026-07-28":
                assert message["result"].get("resultType") == "complete", text
        checked += 1
    return checked
