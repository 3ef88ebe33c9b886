"""The user-only common tools but the system information (umcpfw.sysinfo's): reboot, Wi-Fi
setup, the assets URL and the screen's facts. Each is registered as an
umcp.compat.OnDemand (umcpfw.commonsetup): this module is loaded for the call and dropped
after, as a session seldom calls them. `tools` is the board's CommonTools
(umcpfw.commontools)."""

from umcp.compat import call_then_forget


def reboot(tools, args):
    # The reply leaves before the reset: the reboot waits on its own task.
    tools.reboot(tools.reboot_delay_ms)
    return True


def reconfigure_wifi(tools, args):
    # A flag for the next boot, then a reboot: the setup (umcpfw.wifisetup) starts on a
    # fresh heap, and a board that loses power meanwhile boots normally again.
    tools.settings.set("wifi_setup", True)
    tools.reboot(tools.reboot_delay_ms)
    return ("restarting into Wi-Fi setup: join the board's access point (its name and "
            "password are on its screen and in its log)")


def screen_info(tools, args):
    return tools.board.display.info()


def set_assets_url(tools, args):
    url = args["url"]
    # Checked before it is stored: the download that reads it later must not find a URL
    # that adds header lines to its request, or one no download can use.
    if call_then_forget("unet.url", "parse_url", url)[0] not in ("http", "https"):
        raise ValueError("not an HTTP URL: " + url)
    tools.settings.set("asset_url", url)
    return True
