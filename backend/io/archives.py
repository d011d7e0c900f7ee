"""ZIP and NPZ uploads read with their sizes checked from the headers first.

A ZIP's central directory states each member's uncompressed size, and an NPY member's header states its dtype and
shape: both are read, and compared with the limits, before a byte of content is inflated or an array allocated. That is
how zip bombs and arrays that claim terabytes are refused without being decoded. Pickled (object) arrays are refused
(``allow_pickle=False`` and a dtype check on the header). Every failure is an :class:`InputError`.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import numpy as np

from ..errors import InputError

# What zipfile raises on hostile bytes (a damaged directory, an unknown method or version, odd name encodings)
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, KeyError, IndexError,
              NotImplementedError, RuntimeError, struct.error, zlib.error, UnicodeDecodeError, OverflowError)
MAX_MEMBERS = 512


def open_zip(data: bytes, name: str, max_total: int, max_members: int = MAX_MEMBERS) -> zipfile.ZipFile:
    """A ``ZipFile`` over ``data`` whose declared sizes are within ``max_total`` bytes uncompressed in all."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except ZIP_ERRORS as err:
        raise InputError(f"{name} is a damaged or truncated ZIP archive ({err}). Create it again and retry.") from None
    if len(infos) > max_members:
        raise InputError(f"{name} holds {len(infos)} files; the limit is {max_members}.")
    total = sum(i.file_size for i in infos)
    if total > max_total:
        raise InputError(f"{name} expands to {total / 2**20:.0f} MB; the limit is {max_total / 2**20:.0f} MB "
                         "uncompressed (a zip bomb?). Refused before decompressing.")
    for i in infos:
        if not i.filename:
            raise InputError(f"{name} holds a file without a name; the archive is damaged.")
        if i.flag_bits & 0x1:
            raise InputError(f"{name} is encrypted ({i.filename}); upload an archive without a password.")
    return zf


def read_member(zf: zipfile.ZipFile, member: str | zipfile.ZipInfo, name: str) -> bytes:
    """One member's bytes, never more than its declared size (the header may lie)."""
    info = member if isinstance(member, zipfile.ZipInfo) else zf.getinfo(member)
    try:
        with zf.open(info) as fh:
            out = fh.read(info.file_size + 1)
    except ZIP_ERRORS as err:
        raise InputError(f"{info.filename} in {name} cannot be decompressed ({type(err).__name__}: {err}); the "
                         "archive is damaged.") from None
    if len(out) > info.file_size:
        raise InputError(f"{info.filename} in {name} is larger than its header says; the archive is damaged.")
    return out


def _npy_header(raw: bytes, member: str, name: str) -> tuple[tuple[int, ...], np.dtype, bool]:
    fh = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise ValueError(f"unknown NPY version {version}")
    except (ValueError, EOFError, SyntaxError, TypeError, OverflowError) as err:
        raise InputError(f"{member} in {name} is not a valid NPY array ({err}).") from None
    return shape, dtype, fortran


def load_npz(data: bytes, name: str, max_array_bytes: int, max_total: int | None = None) -> dict[str, np.ndarray]:
    """Every array of an NPZ (``numpy.savez`` layout) as a dict, after checking each header's dtype and size.

    Refused: a damaged archive, members that are not ``.npy``, object (pickled) or structured dtypes, an array whose
    header declares more than ``max_array_bytes``, data shorter or longer than its header says.
    """
    zf = open_zip(data, name, max_total if max_total is not None else 8 * max_array_bytes)
    out: dict[str, np.ndarray] = {}
    with zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            if not info.filename.endswith(".npy"):
                raise InputError(f"{name} holds {info.filename!r}, which is not an NPY array: not a plain NPZ.")
            raw = read_member(zf, info, name)
            shape, dtype, _ = _npy_header(raw, info.filename, name)
            if dtype.hasobject or dtype.fields is not None or dtype.kind in "OVMm":
                raise InputError(f"{info.filename} in {name} is an object or structured array ({dtype}); only plain "
                                 "numeric arrays are accepted (pickles are never loaded).")
            count = int(np.prod(shape, dtype=object)) if shape else 1
            if count * dtype.itemsize > max_array_bytes:
                raise InputError(f"{info.filename} in {name} declares shape {shape} of {dtype} "
                                 f"({count * dtype.itemsize / 2**20:.0f} MB); the limit is "
                                 f"{max_array_bytes / 2**20:.0f} MB. Refused before loading.")
            try:
                arr = np.lib.format.read_array(io.BytesIO(raw), allow_pickle=False)
            except (ValueError, EOFError, OSError, TypeError) as err:
                raise InputError(f"{info.filename} in {name} is truncated or damaged ({err}).") from None
            out[info.filename[:-4]] = arr
    return out
