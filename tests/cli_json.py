"""Run one ``python -m backend ...`` command in-process and read back its ``--json`` output (shared by CLI tests)."""

from __future__ import annotations

import json

import pytest


def run_cli_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    """Run ``python -m backend <argv>`` through the real entry point; assert exit 0 and parse what it printed."""
    from backend.__main__ import main

    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)
