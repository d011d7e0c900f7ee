"""Safe decoding of user uploads. Every upload goes through here: type sniffed from content, size limits, bombs refused,
and failures raised as :class:`backend.errors.InputError` with a message the user can act on."""

from .images import ImageLimits, decode_image, sniff_image_type
from .text import decode_text

__all__ = ["ImageLimits", "decode_image", "sniff_image_type", "decode_text"]
