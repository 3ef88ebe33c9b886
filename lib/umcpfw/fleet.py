"""The application's side of the OTA server (devsvc.otacheck): the first check and
activation at boot and the periodic checks. Imported only where config.json has an ota_url,
and resident there, small: what a check needs and does (umcpfw.checkin: the check made,
its answers acted on; devsvc.otacheck; its HTTP client, unet.http, httpcore and conn) is
loaded for each check and dropped after it, as a board checks at its start and then once an
interval (an hour). What the rest of the application reads between checks is here: the
Fleet is app.ota (saved_transport(), activation)."""

import asyncio

from devsvc.settings import TRANSPORT_KEY
from umcp.compat import forget_modules, get_logger

_OTA_INTERVAL_S = 3600  # between OTA checks (config.json "ota_interval")
# What a check loads, forgotten after it (a photo's upload running meanwhile keeps what it
# runs until it ends, and forgets its modules then).
_CHECK_MODULES = ("umcpfw.checkin", "devsvc.otacheck", "unet.http", "unet.httpcore", "unet.conn")

log = get_logger("app")


class Fleet:
    def __init__(self, app):
        """ValueError: config.json's activation_key is not hex (checked now, not at each check)."""
        self.app = app
        self._check = None  # the check running now (devsvc.otacheck.OtaCheck), if one is
        self._activation = None  # the last check's pending activation block, if any
        self.hmac_key = None  # config.json's activation_key, decoded: what each check signs with
        key = app.config.get("activation_key")
        if key:
            import binascii

            try:
                self.hmac_key = binascii.unhexlify(key)
            except (TypeError, ValueError):
                raise ValueError("activation_key must be the device's key in hex")

    @property
    def activation(self):
        """The pending activation block (its code on the status screen), or None: the running
        check's, else the last one's."""
        check = self._check
        return self._activation if check is None else check.activation

    def saved_transport(self):
        """The transport the OTA server gave last ({"websocket": ...} or {"mqtt": ...}), or None."""
        return self.app.settings.get(TRANSPORT_KEY)

    async def _with_check(self, work):
        """`await work(check, checkin)` with an OtaCheck made for it (umcpfw.checkin); its
        outcome kept here, the check's code dropped after."""
        from umcpfw import checkin

        self._check = check = checkin.make_check(self.app, self.hmac_key)
        try:
            return await work(check, checkin)
        finally:
            self._activation = check.activation
            self._check = check = checkin = None
            forget_modules(*_CHECK_MODULES)

    async def periodic(self):
        interval = self.app.config.get("ota_interval", _OTA_INTERVAL_S)
        while True:
            await asyncio.sleep(interval)
            try:
                await self._with_check(lambda check, checkin: checkin.check_and_activate(check))
            except Exception as e:  # OtaCheckError says what went wrong
                log.warning("%s", e)

    async def first_check(self):
        """Check and activate before connecting, as the reference does at boot; with no
        answer, the last good (saved) settings or config.json's url/token will do."""
        config = self.app.config
        fixed = bool(config.get("url") and config.get("token"))
        retry_s = config.get("ota_retry", 10)
        try:
            await self._with_check(lambda check, checkin: check.until_done(retry_s=retry_s, fallback=fixed))
        except Exception as e:
            log.error("OTA check: %r", e)
