"""Fuzz every registered input decoder in a process with a memory ceiling (``RLIMIT_AS``).

    .venv/bin/python tests/inputs_fuzz_worker.py --examples 20 [--kinds image,radar] [--mem-mb 3072]

For each kind, hypothesis (derandomized: the same inputs on every run) feeds the decoder random bytes, byte-level
mutations of the kind's valid example (flips, truncations, insertions, deletions, splices, boundary integers) and
structure-aware variants (PNG headers with random sizes and modes, NPZ archives of random arrays and keys, CSV/text with
hostile cells). Anything but a value or an ``InputError`` fails the kind, and so does a call slower than
``--max-seconds``; a decoder that allocates past the ceiling fails with ``MemoryError``. Prints one JSON object:
``{kind: {"ok", "calls", "max_s", "error"}}``. ``tests/test_inputs_fuzz.py`` runs it.
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import struct
import sys
import tempfile
import time
import traceback
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TOKENS = ["", "nan", "NaN", "inf", "-inf", "1e308", "-1e308", "1e-320", "0", "-0", "=1+1", "@x", "+1", "-1",
          '"', '""', ",", ";", "\t", "\r", "\r\n", "\x00", "\ufeff", "é", "\udcff", "9" * 400, "x" * 3000,
          "1,2,3,4,5,6,7,8", "\n\n", "label", "frame", "id", "text", "\u202e"]
INTERESTING = [0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=20, help="hypothesis examples per strategy and kind")
    ap.add_argument("--kinds", default="", help="comma-separated kinds (default: every registered kind)")
    ap.add_argument("--mem-mb", type=int, default=3072)
    ap.add_argument("--max-seconds", type=float, default=10.0)
    args = ap.parse_args(argv)
    limit = args.mem_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from backend.errors import InputError
    from backend.io import registry

    kinds = [k for k in args.kinds.split(",") if k] or list(registry.KINDS)
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-"))
    results: dict[str, dict] = {}

    for kind in kinds:
        k = registry.get(kind)
        example = registry.example(kind)
        others = [registry.example(o) for o in registry.KINDS if o != kind]
        stats = {"calls": 0, "max_s": 0.0}

        def call(data: bytes, kind: str = kind, k=k, stats=stats) -> None:
            stats["calls"] += 1
            start = time.perf_counter()
            try:
                if k.source == "folder":
                    folder = tmp / f"f{stats['calls']}"
                    folder.mkdir()
                    (folder / "config.json").write_bytes(data)
                    registry.read_path(kind, folder)
                else:
                    registry.decode(kind, data, name=f"fuzz.{k.extensions[0]}")
            except InputError:
                pass
            took = time.perf_counter() - start
            stats["max_s"] = max(stats["max_s"], took)
            if took > args.max_seconds:
                raise AssertionError(f"{kind}: one call took {took:.1f} s on {len(data)} bytes")

        mutation = st.lists(st.tuples(st.sampled_from(["flip", "set", "insert", "delete", "truncate", "dup",
                                                       "splice", "int32"]),
                                      st.floats(0, 1), st.integers(0, 2**32 - 1), st.binary(max_size=64)),
                            min_size=1, max_size=6)

        def mutate(ops, base: bytes = example, others=others) -> bytes:
            b = bytearray(base)
            for op, where, n, blob in ops:
                i = int(where * len(b)) if b else 0
                if op == "flip" and b:
                    b[min(i, len(b) - 1)] ^= 1 << (n % 8)
                elif op == "set" and b:
                    b[min(i, len(b) - 1)] = INTERESTING[n % len(INTERESTING)] & 0xFF
                elif op == "insert":
                    b[i:i] = blob
                elif op == "delete":
                    del b[i:i + 1 + n % 64]
                elif op == "truncate":
                    del b[i:]
                elif op == "dup":
                    b[i:i] = b[i:i + 1 + n % 256]
                elif op == "splice":
                    o = others[n % len(others)]
                    b[i:] = o[int(where * len(o)):]
                elif op == "int32":
                    b[i:i + 4] = struct.pack("<I" if n % 2 else ">I", INTERESTING[n % len(INTERESTING)])
            return bytes(b)

        strategies = [st.binary(max_size=2048), mutation.map(mutate)]
        if k.family == "image":
            strategies.append(st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1),
                                        st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([0, 2, 3, 4, 6, 7]),
                                        st.binary(max_size=256)).map(lambda t: _png(*t)))
        elif k.family == "archive":
            strategies.append(_npz_strategy(st, kind))
            # the other containers each decoder sniffs: MP4, WebM, GIF, NetCDF and HDF5 magic, then garbage
            magics = [b"\0\0\0\x18ftypmp42", b"\x1a\x45\xdf\xa3", b"GIF89a", b"CDF\x01", b"CDF\x02",
                      b"\x89HDF\r\n\x1a\n", b"PK\x03\x04", b"\x93NUMPY"]
            strategies.append(st.tuples(st.sampled_from(magics), st.binary(max_size=1024)).map(lambda t: t[0] + t[1]))
        elif k.family in ("csv", "text"):
            lines = example.decode().splitlines()
            strategies.append(st.lists(st.tuples(st.integers(0, len(lines) - 1), st.integers(0, 8),
                                                 st.sampled_from(TOKENS) | st.text(max_size=20)),
                                       min_size=1, max_size=8).map(lambda ops, lines=lines: _cells(lines, ops)))
        else:
            strategies.append(st.recursive(st.none() | st.booleans() | st.floats() | st.text(max_size=8),
                                           lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=4),
                                                                                                c, max_size=4),
                                           max_leaves=20).map(lambda v: json.dumps(v).encode()))
        error = None
        for strategy in strategies:
            @settings(max_examples=args.examples, derandomize=True, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck), print_blob=False)
            @given(strategy)
            def prop(data: bytes) -> None:
                call(data)

            try:
                prop()
            except BaseException as err:  # noqa: BLE001 - anything but InputError is the finding
                error = "".join(traceback.format_exception_only(type(err), err))[-2000:]
                break
        results[kind] = {"ok": error is None, **stats, "error": error}
    print(json.dumps(results))
    return 0


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _png(width: int, height: int, depth: int, color: int, body: bytes) -> bytes:
    """A PNG with a valid-CRC header of any size and mode, and an IDAT of ``body`` (deflated)."""
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(body)) + _chunk(b"IEND", b"")


def _npz_strategy(st, kind: str):
    import numpy as np
    from hypothesis.extra import numpy as hnp

    keys = ["video", "fps"] if kind == "video" else ["precip", "timestep_min", "times_min", "pixel_km", "rr"]
    dtypes = st.sampled_from(["uint8", "int8", "int64", "float16", "float32", "float64", "complex64", "bool", "<U3"])
    arrays = dtypes.flatmap(lambda d: hnp.arrays(d, hnp.array_shapes(min_dims=0, max_dims=5, max_side=6)))

    def build(members: dict) -> bytes:
        buf = io.BytesIO()
        np.savez(buf, **members)
        return buf.getvalue()

    return st.dictionaries(st.sampled_from(keys), arrays, min_size=1, max_size=len(keys)).map(build)


def _cells(lines: list[str], ops) -> bytes:
    out = [ln.split(",") for ln in lines]
    for row, col, token in ops:
        cells = out[row]
        cells[col % len(cells)] = token
    return ("\n".join(",".join(c) for c in out) + "\n").encode("utf-8", "surrogateescape")


if __name__ == "__main__":
    raise SystemExit(main())
