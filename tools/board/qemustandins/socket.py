"""A STAND-IN for the socket module, put on the QEMU board by the tests: the board has no
network, so every connection fails as on a board without one.
"""
AF_INET = 2
SOCK_STREAM = 1
SOCK_DGRAM = 2
SOL_SOCKET = 1
SO_REUSEADDR = 4
IPPROTO_TCP = 6


def getaddrinfo(*args, **kwargs):
    raise OSError(113, "no network on this board (a stand-in socket module)")


class socket:
    def __init__(self, *args, **kwargs):
        raise OSError(113, "no network on this board (a stand-in socket module)")
