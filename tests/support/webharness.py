"""What the web console's tests share (and the Wi-Fi setup page's in Chromium): a real
headless Chromium driven by Playwright (the system's browser, never a downloaded one), the
backend with its console, simulated devices, and the screenshots kept under
build/artifacts/web-console/."""

import contextlib
import os
import shutil

import pytest

from tests.support import ROOT
from tools.backend import Backend

ARTIFACTS = os.path.join(ROOT, "build", "artifacts", "web-console")
TOKEN = "test-token"
# Playwright adds --headless and a fresh temporary --user-data-dir itself.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage"]
MISSING = ("the browser tests (the web console, the Wi-Fi setup page) need Chromium and found none: "
           "install it (Debian/Ubuntu: apt-get install chromium chromium-driver) or set UMCP_CHROMIUM "
           "to its executable. .ci/run installs it when missing.")


def chromium_path():
    """The system's Chromium, or the test fails saying so: these tests never skip."""
    for candidate in (os.environ.get("UMCP_CHROMIUM"), shutil.which("chromium"),
                      shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail(MISSING, pytrace=False)


@contextlib.asynccontextmanager
async def browser_page(tmp_path, viewport=None):
    """A fresh headless Chromium (a new profile each time) and one page in it; console errors and
    page errors are collected in page.problems."""
    from playwright.async_api import async_playwright

    executable = chromium_path()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_FLAGS)
        try:
            # bypass_csp: Playwright's waits evaluate strings, which the console's policy
            # forbids; it also means the hostile-device test proves the page's own DOM code
            # keeps HTML out, not merely the Content-Security-Policy (tested on its own).
            context = await browser.new_context(viewport=viewport or {"width": 1280, "height": 900},
                                                bypass_csp=True)
            page = await context.new_page()
            page.problems = []
            page.on("pageerror", lambda error: page.problems.append("pageerror: %s" % error))
            page.on("console", lambda m: m.type == "error" and page.problems.append("console: %s" % m.text))
            page.on("dialog", lambda dialog: page.problems.append("dialog: %s" % dialog.message))
            yield page
        finally:
            await browser.close()


class Shots:
    """Numbered screenshots of each step: build/artifacts/web-console/<test>/NN-step.png."""

    def __init__(self, name):
        self.folder = os.path.join(ARTIFACTS, name)
        shutil.rmtree(self.folder, ignore_errors=True)
        os.makedirs(self.folder)
        self.count = 0

    async def take(self, page, step):
        self.count += 1
        path = os.path.join(self.folder, "%02d-%s.png" % (self.count, step))
        await page.screenshot(path=path, full_page=True)
        return path


@contextlib.asynccontextmanager
async def console_backend(out=None, ota_dir=None, **web):
    backend = Backend(TOKEN, host="127.0.0.1", out=out or (lambda line: None), ota_dir=ota_dir, web=web)
    await backend.start()
    try:
        yield backend
    finally:
        await backend.close()


# Moves a slider as a person lets it go (input, then change) and waits, inside the page,
# until the device's own report of the value (its card, from self.get_device_status) shows
# it. Returns the milliseconds in between.
SLIDE_AND_WAIT = """async ([tool, device, fact, value]) => {
  const slider = document.querySelector(`details[data-tool="${tool}"] input[type=range]`);
  const shown = () => {
    const card = document.querySelector(`.device[data-device="${CSS.escape(device)}"] .fact[data-fact="${fact}"] dd`);
    return card && card.textContent === String(value);
  };
  const started = performance.now();
  slider.value = String(value);
  slider.dispatchEvent(new Event("input", {bubbles: true}));
  slider.dispatchEvent(new Event("change", {bubbles: true}));
  await new Promise((resolve, reject) => {
    const deadline = setTimeout(() => { observer.disconnect(); reject(new Error("value never shown")); }, 10000);
    const observer = new MutationObserver(() => {
      if (shown()) { clearTimeout(deadline); observer.disconnect(); resolve(); }
    });
    observer.observe(document.getElementById("devices"), {subtree: true, childList: true, characterData: true});
    if (shown()) { clearTimeout(deadline); observer.disconnect(); resolve(); }
  });
  return performance.now() - started;
}"""
