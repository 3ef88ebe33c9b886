"""AES-128-CTR for the MQTT+UDP audio packets (xiaozhi.udp), imported by the first packet
encrypted or decrypted: a device that plays no audio (xiaozhi.mqttlink) only checks the
packets that arrive and never loads it. Unchanged on CPython 3.11+ and MicroPython 1.24+.

Back ends: MicroPython's cryptolib in CTR mode (mode 6, only when the port was built with
MICROPY_PY_CRYPTOLIB_CTR), else cryptolib ECB (mode 1) with the counter done here; CPython
uses the `cryptography` package (imported only when needed)."""

from umcp.compat import const

_MASK128 = (1 << 128) - 1
_ECB = const(1)
_CTR = const(6)

try:
    import cryptolib
except ImportError:
    cryptolib = None

_ctr_mode = None  # MicroPython: whether cryptolib has mode 6 (probed on first use)


def _ctr_software(key, iv, data):
    """AES-CTR from ECB: encrypt the counter blocks in one call, XOR as big integers."""
    n = len(data)
    if not n:
        return b""
    blocks = (n + 15) >> 4
    stream = bytearray(blocks << 4)
    counter = int.from_bytes(iv, "big")
    for i in range(blocks):
        stream[i << 4 : (i + 1) << 4] = ((counter + i) & _MASK128).to_bytes(16, "big")
    cryptolib.aes(key, _ECB).encrypt(stream, stream)
    keys = int.from_bytes(bytes(memoryview(stream)[:n]), "big")
    return (int.from_bytes(bytes(data), "big") ^ keys).to_bytes(n, "big")


def ctr_crypt(key, iv, data):
    """AES-128-CTR of `data` (encryption and decryption are the same) -> bytes."""
    global _ctr_mode
    if cryptolib is None:  # CPython
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        op = Cipher(algorithms.AES(bytes(key)), modes.CTR(bytes(iv))).encryptor()
        return op.update(bytes(data)) + op.finalize()
    if _ctr_mode is None:
        try:
            cryptolib.aes(b"\0" * 16, _CTR, b"\0" * 16)
            _ctr_mode = True
        except ValueError:  # built without MICROPY_PY_CRYPTOLIB_CTR
            _ctr_mode = False
    if _ctr_mode:
        out = bytearray(len(data))
        cryptolib.aes(key, _CTR, iv).encrypt(data, out)
        return bytes(out)
    return _ctr_software(key, iv, data)
