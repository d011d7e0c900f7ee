"""Write a golden for one CLI group from the current code: ``python tests/cli_golden/capture.py GROUP ARGV... --json``.

Keys listed with ``--volatile a.b,c`` are removed before saving (see tests/test_cli.py for the path syntax). The other
keys of an existing golden (``file_options``, ``bad_argv``: written by hand) are kept."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> int:
    args = sys.argv[1:]
    volatile = ["provenance"]
    if args and args[0] == "--volatile":
        volatile += [v for v in args[1].split(",") if v]
        args = args[2:]
    from backend.__main__ import main as cli
    from tests.test_cli import strip

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli(args)
    if code != 0:
        print(buf.getvalue()[-2000:], file=sys.stderr)
        return code
    got = json.loads(buf.getvalue())
    for path in volatile:
        got = strip(got, path.split("."))
    out = ROOT / "tests" / "cli_golden" / f"{args[0]}.json"
    kept = json.loads(out.read_text()) if out.is_file() else {}
    spec = {**kept, "argv": args, "volatile": volatile, "expected": got}
    out.write_text(json.dumps(spec, indent=1) + "\n")
    print(f"wrote {out.relative_to(ROOT)} ({len(json.dumps(got))} chars)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
