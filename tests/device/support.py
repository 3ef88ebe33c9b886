# Helpers shared by the device test modules (and the host OTA tests); MicroPython-compatible.


def raises(exc, fn, *args):
    """True if fn(*args) raises `exc` (MicroPython has no pytest.raises)."""
    try:
        fn(*args)
    except exc:
        return True
    return False


class ChunkStream:
    """An async iterator of chunks, as unet.http.get_stream gives; with `fail_at`, the
    connection drops once that many bytes went out."""

    def __init__(self, data, chunk=1000, fail_at=None):
        self.data = data
        self.chunk = chunk
        self.fail_at = fail_at
        self.pos = 0

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.fail_at is not None and self.pos >= self.fail_at:
            raise OSError(104, "connection reset")
        if self.pos >= len(self.data):
            raise StopAsyncIteration
        piece = self.data[self.pos:self.pos + self.chunk]
        self.pos += len(piece)
        return piece
