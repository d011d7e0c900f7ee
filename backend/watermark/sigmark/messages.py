"""The message lengths GF-PRC accepts: the one list that the page, the CLI, the jobs' configs and the extraction
check against. Import-light (plain Python).

A message of ``M`` bits is split into ``M / m`` blocks of ``m`` bits (``m`` = the PRC message length per latent
frame), and each block is tiled over ``Lf / blocks`` latent frames, so ``M`` must be ``m`` times a divisor of ``Lf``
(the tiny model: ``Lf = 6``, ``m = 32`` -> 32, 64, 96 or 192 bits).
"""

from __future__ import annotations

import operator

from backend.errors import InputError
from backend.watermark.sigmark.tiny import latent_frames

BITS_PER_FRAME = 32  # m: the lab's message bits per latent frame block (SIGMarkConfig.bits_per_frame)


def message_options(n_frames: int | None = None, m: int = BITS_PER_FRAME) -> tuple[int, ...]:
    """Valid total message lengths: ``m * blocks`` for every ``blocks`` dividing ``n_frames`` (None: the tiny
    model's Lf)."""
    lf = latent_frames() if n_frames is None else n_frames
    return tuple(m * d for d in range(1, lf + 1) if lf % d == 0)


def describe(options: tuple[int, ...] | None = None) -> str:
    """``"32 bits = 8 hex digits, 64 bits = 16 hex digits, ..."``."""
    return ", ".join(f"{b} bits = {b // 4} hex digits" for b in (options or message_options()))


def check_message_bits(bits: int, options: tuple[int, ...] | None = None) -> int:
    """``bits`` if it is one of ``options`` (default :func:`message_options`), else InputError naming them."""
    options = options or message_options()
    try:
        n = operator.index(bits)
    except TypeError:
        n = None
    if n is None or isinstance(bits, bool) or n not in options:
        raise InputError(f"The message has {bits} bits; valid lengths: {describe(options)}.")
    return n
