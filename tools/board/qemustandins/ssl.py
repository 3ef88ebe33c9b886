"""A STAND-IN for the ssl module, put on the QEMU board by the tests: no network, no TLS."""
CERT_NONE = 0
CERT_REQUIRED = 2
PROTOCOL_TLS_CLIENT = 16


class SSLContext:
    def __init__(self, *args, **kwargs):
        raise OSError(95, "no TLS on this board (a stand-in ssl module)")
