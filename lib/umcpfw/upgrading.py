"""The firmware upgrade as the tools start it: self.upgrade_firmware (tool(), loaded for
the call) and the OTA check's auto_upgrade (CommonTools.start_upgrade). Loaded when an
upgrade is asked for and dropped again when it fails (a good one reboots), with
devsvc.upgrade and unet.download: most sessions never upgrade, and on a board without
PSRAM their bytecode is heap the session needs."""

import asyncio

from umcp.compat import call_then_forget, forget_modules, get_logger

# Imported for an upgrade and dropped after a failed one (see forget()).
_LOADED = ("umcpfw.upgrading", "devsvc.upgrade", "devsvc.espimage", "unet.download", "unet.httpcore",
           "unet.conn")

_log = get_logger("tools")


def upgraded(size):
    return "firmware updated (%d bytes, sha256 verified); rebooting" % size


def _chip(board):
    """The running chip's name: the board's own word (`chip`), else the platform's."""
    if getattr(board, "chip", None):
        return board.chip
    from devsvc import espimage

    return espimage.running_chip()


async def tool(tools, args):
    """self.upgrade_firmware (`tools`: the CommonTools)."""
    return await upgrade_firmware(tools, args["url"], args["sha256"] or None)


async def upgrade_firmware(tools, url, sha256):
    """The tool (`tools`: the CommonTools): waits for the end if the client follows
    progress, else answers at once and upgrades on a task of its own."""
    if tools.upgrade_task is not None:
        raise RuntimeError("a firmware upgrade is already running")
    # Bad arguments are refused now, not reported in a log message later.
    try:
        call_then_forget("unet.url", "parse_url", url)
        if sha256 is not None and not _is_digest(sha256):
            raise ValueError("sha256 must be 64 hex digits")
        if tools.server.progress_requested():
            # The client follows the progress notifications: it can wait for the result.
            async def report(written, total):
                await tools.server.progress(written, total, "%d bytes written" % written)

            size = await _install(tools, url, sha256, report)
            tools.reboot(tools.reboot_delay_ms)
            return upgraded(size)
    except BaseException:
        forget()
        raise
    # A xiaozhi backend follows no progress and gives up on a call after 30 s, less
    # than a big image may take: answer now, report the outcome as a log message.
    start(tools, url, sha256)
    return ("upgrade started: downloading %s; the device reboots when the image is "
            "verified" % url)


def start(tools, url, sha256=None, installed=None):
    """The upgrade on a task of its own (CommonTools.start_upgrade)."""
    if tools.upgrade_task is not None:
        raise RuntimeError("a firmware upgrade is already running")
    tools.upgrade_task = asyncio.create_task(_in_background(tools, url, sha256, installed))


async def _in_background(tools, url, sha256, installed):
    try:
        size = await _install(tools, url, sha256)
        if installed is not None:
            installed()
    except Exception as e:  # cancellation passes through
        tools.upgrade_task = None  # the running image is untouched: a retry may follow
        message = "firmware upgrade from %s failed: %s" % (url, e)
        _log.error("%s", message)  # also where no client listens (auto_upgrade)
        forget()
        await tools.server.log("error", message)
        return
    # upgrade_task stays set: no second upgrade may rewrite the partition set to boot.
    await tools.server.log("info", upgraded(size))
    tools.reboot(tools.reboot_delay_ms)


async def _install(tools, url, sha256, progress=None):
    # upgrade.install() checks the digest before set_boot(): a bad image never boots, and
    # the running image is never touched. The response head comes first: an announced
    # size the partition cannot hold is refused before a single block is written, and the
    # writer's code is loaded only for an image that is there (a board without PSRAM has
    # room for the download or the writer, not always for both and a refusal).
    from unet import download  # only the GET: none of unet.http's POST code

    async with download.get_stream(url, ca=tools.ca) as image:
        await image.open()
        from devsvc import upgrade

        return await upgrade.install(image, sha256, size=image.length, progress=progress,
                                     chip=_chip(tools.board))


def _is_digest(sha256):
    """64 hex digits (devsvc.upgrade.parse_digest's rule, without loading it)."""
    if not isinstance(sha256, str) or len(sha256) != 64:
        return False
    for char in sha256:
        if char not in "0123456789abcdefABCDEF":
            return False
    return True


def forget():
    """Drop this module and what the upgrade loaded (MicroPython; see forget_modules)."""
    forget_modules(*_LOADED)
