"""The web console's speed (make bench's "web" part): the local backend with its web console
and DEVICES simulated boards (tools.sim.board.SimBoard, the firmware on CPython) online,
and a headless Chromium driven by Playwright (the system's browser: UMCP_CHROMIUM, else
chromium on PATH; never a downloaded one). How soon the page is usable (every device listed
and the first one's tool forms ready: the page's own "umcp-usable" mark, from navigation
start, in a fresh profile), and how long a slider takes from being let go to the value the
device reports showing on its card (measured inside the page). Figures, not a test: the
web console's browser tests check what the page does.
"""

import asyncio
import contextlib
import os
import shutil
import statistics
import tempfile
import time

from ..backend import Backend
from ..sim.board import SimBoard, config_for

DEVICES = 20
TOKEN = "bench-web-token"
VOLUME = "self.audio_speaker.set_volume"
SLIDES = (30, 55, 31, 56, 32, 57, 33)
ONLINE_TIMEOUT = 90.0
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
# A slider let go as a person lets it go (input, then change), and the milliseconds until
# the device's card shows the value the device reported.
SLIDE = """async ([tool, device, value]) => {
  const slider = document.querySelector(`details[data-tool="${tool}"] input[type=range]`);
  const card = () => document.querySelector(
    `.device[data-device="${CSS.escape(device)}"] .fact[data-fact="volume"] dd`);
  const started = performance.now();
  slider.value = String(value);
  slider.dispatchEvent(new Event("input", {bubbles: true}));
  slider.dispatchEvent(new Event("change", {bubbles: true}));
  while (!(card() && card().textContent === String(value))) {
    if (performance.now() - started > 10000) throw new Error("the value never showed");
    await new Promise((next) => requestAnimationFrame(next));
  }
  return performance.now() - started;
}"""


def chromium():
    """The system's Chromium, or None."""
    for candidate in (os.environ.get("UMCP_CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser"),
                      shutil.which("google-chrome")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


async def measure(browser_path, devices=DEVICES):
    """{"usable_ms": the page usable, "slides_ms": [a slider's effect, each]}."""
    from playwright.async_api import async_playwright

    backend = Backend(TOKEN, host="127.0.0.1", out=lambda line: None, web={})
    await backend.start()
    try:
        url = "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port
        with tempfile.TemporaryDirectory(prefix="umcp-bench-web-") as folder, \
                open(os.path.join(folder, "devices.log"), "w") as log, contextlib.ExitStack() as boards:
            for n in range(devices):
                boards.enter_context(SimBoard(config_for(url=url, token=TOKEN, device_id="sim-%02d" % n),
                                              root=os.path.join(folder, "board%02d" % n), log=log))
            deadline = time.monotonic() + ONLINE_TIMEOUT
            while not (len(backend.web.records) == devices
                       and all(r.ready and r.info for r in backend.web.records.values())):
                if time.monotonic() > deadline:
                    raise RuntimeError("the %d simulated devices did not all come online" % devices)
                await asyncio.sleep(0.1)
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path=browser_path, headless=True, args=FLAGS)
                try:
                    page = await browser.new_page()
                    await page.goto("http://127.0.0.1:%d/" % backend.http_port)  # loopback: no token asked
                    await page.wait_for_function("performance.getEntriesByName('umcp-usable').length > 0")
                    usable = await page.evaluate("performance.getEntriesByName('umcp-usable')[0].startTime")
                    first = await page.get_attribute("#panel", "data-device")
                    slides = [await page.evaluate(SLIDE, [VOLUME, first, value]) for value in SLIDES]
                finally:
                    await browser.close()
    finally:
        await backend.close()
    return {"usable_ms": usable, "slides_ms": slides}


def print_web():
    """Print the web console's figures; returns whether they were measured."""
    print()
    print("Web console, headless Chromium against the local backend and %d simulated devices on loopback" % DEVICES)
    print()
    path = chromium()
    if path is None:
        print("no Chromium here (Debian: apt-get install chromium, or UMCP_CHROMIUM=/path/to/chrome)")
        return False
    try:
        figures = asyncio.run(measure(path))
    except Exception as e:  # the browser or a device did not do its part: said, not a crash
        print("the web console's bench did not run: %r" % e)
        return False
    usable, slides = figures["usable_ms"], figures["slides_ms"]
    effect = statistics.median(slides)
    print("  page usable (%d devices listed, the first one's tools ready)  %7.0f ms   target < 1000 ms  %s"
          % (DEVICES, usable, "met" if usable < 1000 else "MISSED"))
    print("  slider let go -> value shown by the device (median)           %7.1f ms   target <  100 ms  %s"
          % (effect, "met" if effect < 100 else "MISSED"))
    print("  slider let go -> value shown by the device (worst of %d)       %7.1f ms" % (len(slides), max(slides)))
    print()
    print("Usable: performance.now() at the first moment the page lists every device and the selected")
    print("device's tool forms are rendered, from navigation start (a fresh browser profile). Slider:")
    print("from the change event to the device card showing the value the device reported")
    print("(self.get_device_status, re-read after the call); both measured inside the page.")
    return True
