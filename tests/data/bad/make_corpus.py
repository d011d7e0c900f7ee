"""Write the bad-input corpus: for every registered input kind (``backend.io.registry.KINDS``), files that its decoder
must refuse with an ``InputError`` (``bad_*``) and valid-but-odd files it must process or refuse with an
``InputError`` (``odd_*``), in ``tests/data/bad/<kind>/``.

    .venv/bin/python tests/data/bad/make_corpus.py          # rewrite the corpus
    .venv/bin/python tests/data/bad/make_corpus.py --check  # exit 1 if the files on disk differ from what it writes

Every file is derived from the kind's small valid example (``backend.io.examples``) or written from scratch; bombs
are bombs by header (a PNG or NPY header declaring a huge size, a ZIP member declaring 4 GB, a bzip2 member of
8 MB of zeros whose header claims 4 KB, a gzip stream claiming 4 GB), so the whole corpus stays small. The output is
deterministic (fixed seeds, fixed ZIP timestamps).
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import io
import struct
import sys
import zipfile
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backend.io import registry  # noqa: E402

STAMP = (2020, 1, 1, 0, 0, 0)
# Kinds that pick columns by name: a duplicated name is ambiguous and refused; positional readers may accept it.
BY_NAME = {"trajectories", "labelled_texts", "table"}
NUMERIC_CELLS = {"trajectories", "series", "table", "points2d"}


# ------------------------------------------------------------------------------------------------ builders
def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, STAMP)
            info.compress_type = method
            zf.writestr(info, data)
    return buf.getvalue()


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=True)
    return buf.getvalue()


def _npy_header_only(shape: tuple[int, ...], dtype: str = "<f8") -> bytes:
    """An NPY file whose header declares ``shape`` and which holds 64 bytes of data."""
    header = {"descr": dtype, "fortran_order": False, "shape": shape}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue() + b"\0" * 64


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bomb(width: int = 60_000, height: int = 60_000) -> bytes:
    """A valid-looking PNG whose header declares width x height RGB pixels, with one tiny IDAT."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(b"\0" * 64))
            + _chunk(b"IEND", b""))


def zip_declared_bomb(member: str = "frame_000.png") -> bytes:
    """A ZIP whose central directory says its one member is 4 GB uncompressed."""
    data = bytearray(_zip({member: b"\0" * 256}))
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 24:cd + 28] = struct.pack("<I", 0xFFFFFFF0)
    lh = data.find(b"PK\x03\x04")
    data[lh + 22:lh + 26] = struct.pack("<I", 0xFFFFFFF0)
    return bytes(data)


def zip_bz2_bomb(member: str = "precip.npy", size: int = 8 * 2**20, declared: int = 4096) -> bytes:
    """A ZIP member of ``size`` bytes of zeros compressed with bzip2 (about 100 bytes), its headers claiming only
    ``declared`` bytes: the reader must stop at the declared size instead of inflating what follows."""
    comp = bz2.BZ2Compressor(9)
    chunk = b"\0" * 2**20
    body = b"".join(comp.compress(chunk) for _ in range(size // len(chunk))) + comp.flush()
    crc = zlib.crc32(b"\0" * declared)
    name = member.encode()
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 46, 0, 12, 0, 0x2821, crc, len(body), declared, len(name), 0)
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 46, 46, 0, 12, 0, 0x2821, crc, len(body), declared,
                          len(name), 0, 0, 0, 0, 0, 0)
    off = len(local) + len(name) + len(body)
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central) + len(name), off, 0)
    return local + name + body + central + name + end


def gzip_bomb() -> bytes:
    """1 MB of zeros gzipped, the trailer claiming 4 GB."""
    data = bytearray(gzip.compress(b"\0" * 2**20, mtime=0))
    data[-4:] = struct.pack("<I", 0xFFFFFFF0)
    return bytes(data)


def _npz_arrays(kind: str, arr: np.ndarray) -> bytes:
    if kind == "video":
        return _zip({"video.npy": _npy(arr), "fps.npy": _npy(np.float32(8.0))})
    return _zip({"precip.npy": _npy(arr), "timestep_min.npy": _npy(np.float32(15.0))})


# --------------------------------------------------------------------------------------------------- cases
def binary_cases(kind: str, ex: bytes, ext: str) -> dict[str, bytes]:
    text = registry.example("trajectories")
    out = {f"bad_empty.{ext}": b"", f"bad_trunc_8.{ext}": ex[:8], f"bad_trunc_third.{ext}": ex[: len(ex) // 3],
           f"bad_trunc_two_thirds.{ext}": ex[: 2 * len(ex) // 3], f"bad_wrong_magic.{ext}": b"\0\1\2\3" + ex[4:],
           f"bad_text_named_{ext}.{ext}": text, f"bad_gzip_bomb.{ext}": gzip_bomb(),
           f"bad_random.{ext}": np.random.default_rng(7).integers(0, 256, 600, dtype=np.uint8).tobytes()}
    if kind == "image":
        out.update({"bad_bomb_header.png": png_bomb(), "bad_tall_header.png": png_bomb(16, 2_000_000),
                    "bad_gif.png": b"GIF89a" + ex[6:], "bad_tiff.png": b"II*\0" + ex[4:],
                    "bad_svg.png": b'<svg xmlns="http://www.w3.org/2000/svg" width="9e9" height="9e9"/>',
                    "bad_npz_named_png.png": registry.example("radar")})
    else:
        png = registry.example("image")
        frames = (np.arange(16 * 16 * 4, dtype=np.float32).reshape(4, 16, 16) % 7)
        arrays = {"nan": np.where(frames > 5, np.nan, frames), "inf": np.where(frames > 5, np.inf, frames),
                  "negative": frames - 3, "rank2": frames[0], "rank4": frames[None], "complex": frames + 1j,
                  "bool": frames > 3}
        if kind == "video":
            v = np.zeros((6, 16, 16, 3), np.uint8)
            arrays = {"float": v.astype(np.float32) + np.nan, "negative": v.astype(np.int8) - 1,
                      "rank3": v[..., 0], "rank5": v[None], "one_frame": v[:1], "channels4": np.zeros((6, 16, 16, 4),
                                                                                                        np.uint8)}
        out.update({f"bad_npz_{k}.npz": _npz_arrays(kind, a) for k, a in arrays.items()})
        out.update({
            "bad_npz_pickled.npz": _npz_arrays(kind, np.array([{"a": 1}, None], dtype=object)),
            "bad_npz_bomb_header.npz": _zip({("video.npy" if kind == "video" else "precip.npy"):
                                             _npy_header_only((100_000, 100_000, 100))}),
            "bad_npz_missing_key.npz": _zip({"other.npy": _npy(np.zeros(3))}),
            "bad_npz_not_npy_member.npz": _zip({"precip.npy": b"not an array"}),
            "bad_zip_bomb_header.zip": zip_declared_bomb(),
            "bad_zip_bz2_bomb.npz": zip_bz2_bomb("video.npy" if kind == "video" else "precip.npy"),
            "bad_zip_png_bomb.zip": _zip({f"frame_{i:03d}.png": png_bomb() for i in range(5)}),
            "bad_zip_no_png.zip": _zip({"readme.txt": b"no frames here"}),
            "bad_zip_not_png.zip": _zip({f"frame_{i:03d}.png": b"not a png" for i in range(5)}),
            "bad_zip_truncated_png.zip": _zip({f"frame_{i:03d}.png": png[: len(png) // 2] for i in range(5)}),
            "bad_png_single.png": png,
        })
        if kind == "radar":
            nc = registry.odd_examples("radar")["classic.nc"]
            out.update({"bad_hdf5.nc": b"\x89HDF\r\n\x1a\n" + b"\0" * 64, "bad_netcdf_trunc.nc": nc[: len(nc) // 2],
                        "bad_netcdf_header.nc": nc[:40], "bad_npy_single.npz": _npy(frames)})
    return out


def _swap_cell(lines: list[str], value: str) -> list[str]:
    """The first data row with its first numeric cell replaced by ``value``."""
    out = list(lines)
    for i, line in enumerate(out[1:], start=1):
        cells = line.replace(";", ",").split(",")
        for j, c in enumerate(cells):
            try:
                float(c)
            except ValueError:
                continue
            cells[j] = value
            out[i] = ",".join(cells)
            return out
    return out


def text_cases(kind: str, ex: bytes, ext: str) -> dict[str, bytes]:
    text = ex.decode()
    lines = text.splitlines()
    enc = lambda rows: ("\n".join(rows) + "\n").encode()  # noqa: E731
    out = {f"bad_empty.{ext}": b"", f"bad_png_named_{ext}.{ext}": registry.example("image"),
           f"bad_npz_named_{ext}.{ext}": registry.example("radar"), f"bad_gzip_bomb.{ext}": gzip_bomb(),
           f"bad_utf16.{ext}": text.encode("utf-16"), f"bad_latin1.{ext}": (text + "\ncaf\u00e9\n").encode("latin-1"),
           f"bad_mixed_encoding.{ext}": ex + "na\u00efve\n".encode() + "caf\u00e9\n".encode("latin-1"),
           f"bad_nul_bytes.{ext}": ex[:20] + b"\0\0\0" + ex[20:],
           f"odd_trunc_half.{ext}": ex[: len(ex) // 2], f"odd_trunc_minus3.{ext}": ex[:-3],
           f"odd_huge_line.{ext}": (lines[0] + "\n" + "1.5," * 4096 + "\n").encode(),
           f"odd_other_kind.{ext}": registry.example("labelled_texts" if kind != "labelled_texts" else "table"),
           f"odd_whitespace.{ext}": b" \n\t\n  \n"}
    if kind in ("trajectories", "table", "points2d", "labelled_texts"):
        header = lines[0].split(",")
        out[f"bad_missing_columns.{ext}"] = enc([ln.split(",")[0] for ln in lines])
        dup = enc([f"{lines[0]},{header[0]}"] + [f"{ln},{ln.split(',')[0]}" for ln in lines[1:]])
        out[f"{'bad' if kind in BY_NAME else 'odd'}_duplicate_columns.{ext}"] = dup
        out[f"bad_header_only.{ext}"] = enc(lines[:1])
    if kind in NUMERIC_CELLS:
        out[f"bad_nan_cell.{ext}"] = enc(_swap_cell(lines, "nan"))
        out[f"bad_inf_cell.{ext}"] = enc(_swap_cell(lines, "inf"))
        out[f"odd_formula_cell.{ext}"] = enc(_swap_cell(lines, "=1+2"))
        out[f"odd_negative_cell.{ext}"] = enc(_swap_cell(lines, "-1e300"))
    if kind == "labelled_texts":
        out[f"bad_unclosed_quote.{ext}"] = enc(lines[:3] + ['"never closed,pos'] + lines[3:])
        out[f"bad_long_text.{ext}"] = enc(lines + ["x" * 2100 + ",pos"])
    if kind == "candidates":
        out[f"bad_one_answer.{ext}"] = b"Only one answer."
        out[f"bad_too_many.{ext}"] = ("\n".join(f"answer {i}" for i in range(70))).encode()
    return out


def json_cases(ex: bytes) -> dict[str, bytes]:
    return {"bad_empty.json": b"", "bad_truncated.json": ex[: len(ex) // 2], "bad_array.json": b"[1, 2, 3]",
            "bad_number.json": b"42", "bad_latin1.json": '{"name": "caf\u00e9"}'.encode("latin-1"),
            "bad_png.json": registry.example("image"), "bad_gzip_bomb.json": gzip_bomb(),
            "bad_deep_nesting.json": b"[" * 5000, "bad_nan_token.json": b"{\"a\": NaN,",
            "odd_nan_value.json": b'{"a": NaN}', "odd_duplicate_keys.json": b'{"a": 1, "a": 2}'}


def corpus() -> dict[str, dict[str, bytes]]:
    """``{kind: {file name: bytes}}``: every file of the corpus."""
    out: dict[str, dict[str, bytes]] = {}
    for kind, k in registry.KINDS.items():
        ex = registry.example(kind)
        ext = k.extensions[0] if k.extensions else "json"
        if k.family in ("image", "archive"):
            files = binary_cases(kind, ex, ext)
        elif k.family == "json":
            files = json_cases(ex)
        else:
            files = text_cases(kind, ex, ext)
        files.update({f"odd_{name}": data for name, data in registry.odd_examples(kind).items()})
        files[f"odd_example.{ext}"] = ex
        out[kind] = dict(sorted(files.items()))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the files on disk instead of writing")
    args = ap.parse_args(argv)
    want = corpus()
    differ = []
    for kind, files in want.items():
        folder = HERE / kind
        have = {p.name for p in folder.glob("*")} if folder.is_dir() else set()
        if args.check:
            differ += [f"{kind}/{n}" for n in sorted(have ^ set(files))]
            differ += [f"{kind}/{n}" for n, d in files.items() if n in have and (folder / n).read_bytes() != d]
            continue
        folder.mkdir(parents=True, exist_ok=True)
        for stale in have - set(files):
            (folder / stale).unlink()
        for name, data in files.items():
            (folder / name).write_bytes(data)
    if args.check and differ:
        print("corpus differs from make_corpus.py:", ", ".join(differ))
        return 1
    total = sum(len(d) for files in want.values() for d in files.values())
    print(f"{sum(map(len, want.values()))} files in {len(want)} kinds, {total / 1024:.0f} KB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
