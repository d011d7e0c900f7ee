"""The ``channel_stack`` input kind: a user's multi-channel image stack for the MCD page and ``mcd impute --stack``.

Accepted: an NPZ (``numpy.savez``) holding one array ``stack`` (or its only array) of shape ``(C, H, W)`` or
``(1, C, H, W)`` with ``C = 12`` channels in the order of :data:`backend.imputation.mcd.tissue.CHANNELS`, ``H, W`` in
8..96, a real numeric dtype, finite values. TIFF is not read (``tifffile`` is not installed); save a TIFF stack as
NPZ first. Object (pickled) arrays are refused before loading (:func:`backend.io.archives.load_npz`).

Shapes: returns ``(C, H, W)`` float32.
"""

from __future__ import annotations

import io

import numpy as np

from backend.errors import InputError

MAX_BYTES = 4 * 2**20
MIN_SIDE, MAX_SIDE = 8, 96
N_CHANNELS = 12


def read_stack(data: bytes, name: str = "the stack", channels: int = N_CHANNELS) -> np.ndarray:
    """Decode and validate an NPZ channel stack; returns ``(channels, H, W)`` float32."""
    if not data:
        raise InputError(f"{name} is empty; upload an NPZ with a (12, H, W) array named 'stack'.")
    if len(data) > MAX_BYTES:
        raise InputError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is 4 MB.")
    if data[:2] != b"PK":
        if data[:4] in (b"II*\x00", b"MM\x00*"):
            raise InputError(f"{name} is a TIFF; TIFF is not read here: save the stack with numpy.savez as NPZ.")
        raise InputError(f"{name} is not an NPZ archive; save the (12, H, W) stack with numpy.savez(file, stack=a).")
    from backend.io.archives import load_npz

    arrays = load_npz(data, name, max_array_bytes=2 * 2**20)
    if not arrays:
        raise InputError(f"{name} holds no arrays.")
    if "stack" in arrays:
        arr = arrays["stack"]
    elif len(arrays) == 1:
        arr = next(iter(arrays.values()))
    else:
        raise InputError(f"{name} holds {len(arrays)} arrays ({', '.join(sorted(arrays))}); name the stack 'stack'.")
    if arr.dtype.kind not in "fiu" or arr.dtype.kind == "b":
        raise InputError(f"{name} has dtype {arr.dtype}; a real numeric (float or integer) array is needed.")
    if arr.ndim == 4 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.ndim != 3:
        raise InputError(f"{name} has shape {arr.shape} (rank {arr.ndim}); a (channels, H, W) stack is needed.")
    if arr.shape[0] != channels:
        more = "too many" if arr.shape[0] > channels else "too few"
        raise InputError(f"{name} has {arr.shape[0]} channels ({more}); the panel has exactly {channels}, first axis "
                         "in the order of the channel list shown on the page.")
    h, w = arr.shape[1:]
    if not (MIN_SIDE <= h <= MAX_SIDE and MIN_SIDE <= w <= MAX_SIDE):
        raise InputError(f"{name} is {h} x {w} pixels; each side must be {MIN_SIDE} to {MAX_SIDE} (crop or bin it).")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} contains NaN or inf values; fill or remove them first.")
    if np.any(arr.reshape(channels, -1).std(1) == 0):
        flat = [i for i in range(channels) if arr[i].std() == 0]
        raise InputError(f"{name} has constant channels {flat}; every channel needs some variation.")
    return arr.astype(np.float32)


def to_bytes(stack: np.ndarray) -> bytes:
    """An NPZ of ``stack`` (the page's download and the input kind's example)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, stack=np.asarray(stack, np.float32))
    return buf.getvalue()
