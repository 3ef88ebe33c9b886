# Boot entry: read config.json (Wi-Fi, server URL, token, board) and run the application.
import asyncio
import json

import app

CONFIG_FILE = "config.json"


def load_config(path=CONFIG_FILE):
    with open(path) as f:
        return json.load(f)


def setup_logging():
    """Info-level log lines where a logging module exists (CPython, micropython-lib)."""
    try:
        import logging
    except ImportError:
        return
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")


def run():
    setup_logging()
    asyncio.run(app.main(load_config()))


if __name__ == "__main__":
    run()
