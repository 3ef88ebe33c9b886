"""Who may use the backend's web console, and the headers its answers carry.

Not remote (the default): only connections from this machine, and only under a loopback
Host name (a page elsewhere that resolves its own name to 127.0.0.1 gets nothing). Remote:
every API request needs `Authorization: Bearer <token>` (compared in constant time).
Either way an API request whose Origin (or Sec-Fetch-Site) says it comes from another site
is refused, and a POST must be JSON (a form another site posts cannot be).
"""

import hmac
import ipaddress

from starlette.responses import JSONResponse

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}
SECURITY_HEADERS = {
    # Only our own files run: no inline script, nothing from elsewhere; images may be
    # data: URLs (tool results) or ours (photos).
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data: blob:; media-src data:; connect-src 'self'; object-src 'none'; "
                               "base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def is_loopback(address):
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def refused(status, message):
    return JSONResponse({"error": {"message": message}}, status_code=status, headers=SECURITY_HEADERS)


def refusal(request, api, remote, token, port):
    """A response refusing `request` (an /api/ one when `api`), or None to serve it. `port`:
    the console's, for the URL a refusal names."""
    if not remote:
        client = request.client.host if request.client else ""
        if not is_loopback(client):
            return refused(403, "the web console answers this machine only; start the backend with "
                                 "--console-host 0.0.0.0 to open it to others (it then needs a token)")
        host = (request.headers.get("host") or "").lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name not in LOOPBACK_NAMES:
            return refused(403, "unexpected Host %r: open the console as http://127.0.0.1:%d/"
                            % (host, port))
    if not api:
        return None
    origin = request.headers.get("origin")
    expected = "%s://%s" % (request.url.scheme, request.headers.get("host", ""))
    site = request.headers.get("sec-fetch-site")
    if (origin is not None and origin != expected) or site not in (None, "same-origin", "none"):
        return refused(403, "cross-origin requests are refused")
    if request.method == "POST" and request.headers.get("content-type", "").split(";")[0] != "application/json":
        return refused(415, "send JSON (Content-Type: application/json)")
    if remote:
        scheme, _, presented = (request.headers.get("authorization") or "").partition(" ")
        if scheme != "Bearer" or not hmac.compare_digest(presented.encode(), token.encode()):
            return refused(401, "this console needs its token: Authorization: Bearer <token>")
    return None
