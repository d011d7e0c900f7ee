"""The ``glot`` CLI group through argparse (as ``python -m backend`` wires it): a tiny stress run and CSV training
print JSON with provenance; bad input exits non-zero with its message."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from backend.tokens.glot import cli as glot_cli


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="python -m backend")
    glot_cli.add_parser(parser.add_subparsers(dest="group"))
    args = parser.parse_args(["glot", *argv])
    code = args.func(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_stress_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["stress", "--backbone", "minilm", "--ratio", "0.9", "--variant", "hard", "--pooling", "glot",
                         "--pooling", "mean", "--seed", "0", "--n-train", "16", "--n-eval", "8", "--epochs", "1",
                         "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert {r["method"] for r in data["summary"]} == {"glot", "mean", "bow-unigram", "bow-1..2gram"}
    assert data["provenance"]["seed"] == 0 and data["provenance"]["params"]["variant"] == "hard"
    assert data["glot_config"]["tau"] == 0.6


def test_train_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [f"the report was {'great' if i % 2 else 'awful'} number {i},{'pos' if i % 2 else 'neg'}" for i in range(16)]
    path = tmp_path / "texts.csv"
    path.write_text("text,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    code, out, _ = _run(["train", "--csv", str(path), "--pooling", "adapool", "--epochs", "2", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["classes"] == ["neg", "pos"] and data["n_eval"] == 4
    assert {r["method"] for r in data["rows"]} == {"adapool", "bow-unigram", "bow-1..2gram"}


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty"),
        (b"words,y\na,1\n", "lacks the column"),
        (b"text,label\n" + b"same class text,1\n" * 12, "only one class"),
        (b"text,label\n" + b"y" * 2001 + b",1\n", "2000"),
        (b"text,label\n\xc3\x28 broken,1\n", "UTF-8"),
    ],
)
def test_train_bad_csv_exits_nonzero(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes,
                                     message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    code, out, err = _run(["train", "--csv", str(path), "--json"], capsys)
    assert code == 2
    assert message in err and message in json.loads(out)["error"]


def test_missing_file_and_bad_settings(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["train", "--csv", "/nonexistent/file.csv"], capsys)
    assert code == 2 and "No such file" in err
    code, _, err = _run(["stress", "--tau", "3", "--n-train", "16", "--n-eval", "8"], capsys)
    assert code == 2 and "tau" in err
    code, _, err = _run(["stress", "--backbone", "/no/such/folder", "--n-train", "16", "--n-eval", "8"], capsys)
    assert code == 2 and "neither an existing local folder" in err
