"""make bench's Markdown record (tools/bench/record.py): the header, the sections, and what
the bench prints, from given figures. No bench runs here: the parts are replaced."""

import contextlib
import os
import platform
import subprocess
import sys

import pytest

from tools.bench import record, report
from tools.mpy import ROOT

FACTS = [("date", "2026-11-24 16:31 UTC"), ("commit", "aa9938eec635"), ("CPU", "AMD EPYC"),
         ("cores", "2"), ("load average at start", "0.56, 0.38, 0.19 (1, 5, 15 min)"),
         ("OS", "Debian GNU/Linux 12 (bookworm) (Linux 6.1.0, x86_64)"), ("Python", "CPython 3.11.7"),
         ("MicroPython unix port", "MicroPython 1.29.0 (v1.29.0 on 2026-11-22), 32-bit: micropython-x86")]

CORE = {"interpreter": "cpython 3.11.7", "list_us": 88.04, "floor_us": 47.6, "list_heap": 13721.6,
        "floor_heap": 53043.2, "call_us": 12.5}
UNIX = {"interpreter": "micropython 1.29.0", "list_us": 184.2, "floor_us": 155.7, "list_heap": 21094.4,
        "floor_heap": 7987.2, "call_us": 14.9}


def test_the_file_is_headed_with_the_machine_then_holds_each_table_as_printed():
    lines = report.table([("CPython", CORE), ("MicroPython unix", UNIX)])
    printed = "\n" + "\n".join(lines) + "\n\nTimes are means.\n\n"
    text = record.render("python -m tools.bench", FACTS, [(report.TITLES["core"], printed, True)])
    out = text.splitlines()
    assert out[0] == "# make bench: `python -m tools.bench`"
    assert "[benchmarks](../benchmarks.md)" in out[2]
    header = out.index("| | |")
    assert out[header + 1] == "|---|---|"
    assert out[header + 2:header + 2 + len(FACTS)] == ["| %s | %s |" % fact for fact in FACTS]
    section = out.index("## " + report.TITLES["core"])
    # The printed text, verbatim between the fences, less the blank lines around it.
    assert out[section + 1:section + 3] == ["", "```text"]
    body = out[section + 3:out.index("```", section + 3)]
    assert body == lines + ["", "Times are means."]
    assert "88.0 us" in body[2] and "184.2 us" in body[2] and "13.4 KB" in body[5]
    assert text.endswith("```\n") and "Did not run" not in text


def test_a_part_that_did_not_run_is_named_and_its_message_kept():
    sections = [("Link", "Link table\n", True), ("Firmware", "the firmware bench did not run:\nboom\n", False)]
    text = record.render("python -m tools.bench", FACTS, sections, note="Only some parts ran.")
    assert "Did not run through (the section says why): Firmware." in text
    assert "\nOnly some parts ran.\n" in text
    assert "## Firmware\n\n```text\nthe firmware bench did not run:\nboom\n```\n" in text
    assert text.index("## Link") < text.index("## Firmware")


def test_cells_and_fences_survive_what_the_bench_prints():
    text = record.render("x", [("OS", "a | b")], [("Odd", "```\ncode\n", True), ("Empty", "\n\n", True)])
    assert "| OS | a \\| b |" in text
    assert "````text\n```\ncode\n````" in text
    assert "## Empty\n\n```text\n(nothing printed)\n```" in text


def test_a_section_passes_output_through_unchanged_and_keeps_it(capsys):
    run = record.Record()
    with run.section("one") as part:
        print("a table")
        print("  row", 1, flush=True)
    with pytest.raises(RuntimeError):
        with run.section("two"):
            print("half")
            raise RuntimeError("stopped")
    assert capsys.readouterr().out == "a table\n  row 1\nhalf\n"
    assert run.sections == [("one", "a table\n  row 1\n", True), ("two", "half\n", True)]


def test_a_section_answers_what_a_log_formatter_asks_of_its_stream(tmp_path):
    # uvicorn's formatter asks the stream whether it is a terminal: inside a section the
    # answer is the real stream's (the firmware bench starts the backend there).
    import logging.config

    with open(tmp_path / "out.txt", "w") as real, contextlib.redirect_stdout(real):
        with record.Record().section("backend"):
            assert sys.stdout.isatty() is False
            logging.config.dictConfig({"version": 1, "disable_existing_loggers": False,
                                       "formatters": {"default": {"()": "uvicorn.logging.DefaultFormatter"}}})


def test_the_machine_facts_are_this_machines():
    facts = dict(record.machine_facts(os.path.join(ROOT, ".venv", "bin", "micropython"), wasm=True))
    assert facts["cores"] == str(os.cpu_count())
    assert facts["Python"] == "%s %s" % (platform.python_implementation(), platform.python_version())
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    assert head.startswith(facts["commit"].split()[0])
    assert facts["MicroPython unix port"].startswith("MicroPython 1.29.")
    assert "64-bit: .venv/bin/micropython" in facts["MicroPython unix port"]
    assert facts["MicroPython wasm"].startswith("MicroPython 1.27.0 ")
    assert facts["date"].endswith(" UTC") and facts["CPU"] and facts["OS"]
    assert record.micropython_build("/nonexistent/micropython") == "/nonexistent/micropython: did not run"


def test_the_guide_is_linked_from_where_the_record_lies():
    assert record.guide_link(os.path.join(ROOT, "docs", "bench", "latest.md")) == "../benchmarks.md"
    assert record.guide_link(os.path.join(ROOT, "docs", "fleet.md")) == "benchmarks.md"
    assert record.guide_link(os.path.join(ROOT, "bench.md")) == "docs/benchmarks.md"
    text = record.render("x", FACTS, [], guide="docs/benchmarks.md")
    assert "[benchmarks](docs/benchmarks.md)" in text


def test_bench_main_records_the_parts_it_ran(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(report, "core_table", lambda micropython: (print("core table") or True, {}))
    monkeypatch.setattr(report.bench_link, "print_link", lambda micropython: print("link table") or True)
    monkeypatch.setattr(report.firmwaretable, "print_firmware", lambda *args: print("firmware failed") or False)
    for name in ("UMCP_MICROPYTHON", "UMCP_MICROPYTHON_FROZEN", "UMCP_MICROPYTHON_HWSIM", "UMCP_MICROPYTHON_STOCK"):
        monkeypatch.delenv(name, raising=False)
    target = tmp_path / "bench" / "latest.md"
    assert report.main(["--only", "firmware,core,link", "--record", str(target)]) == 1
    out = capsys.readouterr().out
    said, rest = out.split("\n", 1)  # first what the binary is, from running it
    assert said == "MicroPython unix port: MicroPython v1.29.0-preview, 64-bit, the heap in one area, " \
                   "asyncio frozen in: %s" % os.path.join(ROOT, ".venv", "bin", "micropython")
    assert rest.startswith("core table\nlink table\nfirmware failed\n")
    assert out.endswith("written: %s\n" % target)
    text = target.read_text()
    assert text.startswith("# make bench: `python -m tools.bench --only core,link,firmware`\n")
    assert "Only some parts of the bench ran: core, link, firmware." in text
    assert "Did not run through (the section says why): %s." % report.TITLES["firmware"] in text
    for part, printed in (("core", "core table"), ("link", "link table"), ("firmware", "firmware failed")):
        assert "## %s\n\n```text\n%s\n```" % (report.TITLES[part], printed) in text


def test_the_run_names_the_binaries_it_measures_with_and_the_stock_one_only_for_its_table():
    venv = os.path.join(ROOT, ".venv", "bin", "micropython")
    args = report.argparse.Namespace(micropython=venv, frozen=None, hardware_frozen="/opt/hw", stock="/opt/split")
    assert report.binaries(args, ["core"]) == [("MicroPython unix port", venv), ("hardware frozen", "/opt/hw")]
    assert report.binaries(args, ["core", "stock"])[-1] == ("stock table", "/opt/split")
    facts = dict(record.machine_facts(venv, stock=venv))
    assert facts["MicroPython, stock table"] == (
        "MicroPython v1.29.0-preview, 64-bit, the heap in one area, asyncio frozen in: %s" % venv)
    assert record.instrument_build("/nonexistent/micropython") == "/nonexistent/micropython: did not run"


def test_bench_main_refuses_an_unknown_part(capsys):
    with pytest.raises(SystemExit):
        report.main(["--only", "core,speed"])
    assert "unknown part speed" in capsys.readouterr().err
