"""The status lines of unet.httpd's answers other than 200 OK, as data: the server loads
this module at the first such answer (a refusal, a legacy client's 202), so a server that
only says 200 OK keeps no heap for the table (the board's MCP endpoint forgets it with the
rest of its code when idle, as unet.httpdrefusal)."""

# "|<code> <reason>" for each status answered: one string (a table of pairs would be some
# 40 objects on the heap while it is loaded).
_REASONS = ("|100 Continue|200 OK|202 Accepted|204 No Content|400 Bad Request|401 Unauthorized|403 Forbidden"
            "|404 Not Found|405 Method Not Allowed|406 Not Acceptable|409 Conflict|411 Length Required"
            "|413 Content Too Large|415 Unsupported Media Type|431 Request Header Fields Too Large"
            "|500 Internal Server Error|503 Service Unavailable|505 HTTP Version Not Supported|")


def status_line(status):
    """'HTTP/1.1 404 Not Found' for 404; 'HTTP/1.1 599 Unknown' for a status the table
    does not name."""
    start = _REASONS.find("|%d " % status) + 1
    if not start:
        return "HTTP/1.1 %d Unknown" % status
    return "HTTP/1.1 " + _REASONS[start:_REASONS.find("|", start)]
