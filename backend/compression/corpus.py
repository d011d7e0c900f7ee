"""Text for calibration and held-out evaluation of pruned language models, fully offline.

The built-in corpus is the Python reference documentation that ships inside CPython itself: ``pydoc_data.topics``
(79 topics such as "assignment", "for", "class", "exceptions"; about 465,000 characters, about 113,000 SmolLM2
tokens). The topics are joined in sorted order and split once at a paragraph boundary near 70 % of the characters:
the first part is the calibration text, the rest is held out for perplexity. WikiText-2, the paper's corpus, cannot
be downloaded here, so perplexities are not comparable with the paper's numbers (only with each other).

A user's own UTF-8 text is split the same way (70 / 30).

Segments follow the paper's released code (SparseGPT/FLAP data loaders): ``n_calib`` calibration windows of
``seqlen`` tokens at random offsets (seeded) of the tokenised calibration text, and consecutive non-overlapping
``seqlen``-token windows of the held-out text for perplexity (context 128 by default, FLAP's convention).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..io.text import decode_text

if TYPE_CHECKING:
    import torch

CALIB_FRACTION = 0.7
MAX_UPLOAD_BYTES = 2 * 1024 * 1024
MIN_HELDOUT_SEGMENTS = 2
BUILTIN_NAME = "pydoc_data.topics (CPython reference docs)"


def builtin_text() -> str:
    """The Python reference topics that ship with CPython, joined in sorted key order (deterministic)."""
    from pydoc_data import topics

    return "\n\n".join(topics.topics[k].strip() for k in sorted(topics.topics))


def split_text(text: str, fraction: float = CALIB_FRACTION) -> tuple[str, str]:
    """Split ``text`` into (calibration, held-out) at the paragraph break closest to ``fraction`` of its length."""
    cut = int(len(text) * fraction)
    lo, hi = text.rfind("\n\n", 0, cut), text.find("\n\n", cut)
    candidates = [c for c in (lo, hi) if c > 0]
    if candidates:
        cut = min(candidates, key=lambda c: abs(c - cut))
    return text[:cut].strip(), text[cut:].strip()


def decode_upload(data: bytes, name: str = "the upload") -> str:
    """Decode a user's text file (UTF-8, at most 2 MB); :class:`InputError` when empty, binary or not UTF-8."""
    return decode_text(data, max_bytes=MAX_UPLOAD_BYTES, name=name, min_chars=1)


@dataclass
class TextSplit:
    """Tokenised calibration and held-out text.

    ``calib_tokens``: LongTensor [Nc] of the calibration part; ``heldout_tokens``: LongTensor [Nh]; ``source``: a
    human-readable name; ``chars``: (calibration, held-out) character counts.
    """

    calib_tokens: torch.Tensor
    heldout_tokens: torch.Tensor
    source: str
    chars: tuple[int, int]

    def calib_segments(self, n: int, seqlen: int = 128, seed: int = 0) -> torch.Tensor:
        """``n`` calibration windows [n, seqlen] at random offsets drawn with ``torch.Generator(seed)``.

        Needs at least ``n * seqlen`` calibration tokens (so that the windows could be disjoint); otherwise
        :class:`InputError` says how much text is missing.
        """
        import torch

        have = int(self.calib_tokens.numel())
        if n < 1:
            raise InputError("The number of calibration segments must be at least 1.")
        if have < n * seqlen or have <= seqlen:
            raise InputError(
                f"The calibration part of {self.source} has {have:,} tokens, but {n} segments of {seqlen} tokens need "
                f"at least {n * seqlen:,}. Use fewer calibration segments or a longer text (about "
                f"{int(n * seqlen / CALIB_FRACTION * 4.2):,} characters of English)."
            )
        g = torch.Generator().manual_seed(int(seed))
        starts = torch.randint(0, have - seqlen, (n,), generator=g)
        return torch.stack([self.calib_tokens[s : s + seqlen] for s in starts.tolist()])

    def heldout_segments(self, n: int | None = None, seqlen: int = 128) -> torch.Tensor:
        """The first ``n`` (all when None) consecutive non-overlapping windows [n, seqlen] of the held-out text."""
        total = int(self.heldout_tokens.numel()) // seqlen
        if total < MIN_HELDOUT_SEGMENTS:
            raise InputError(
                f"The held-out part of {self.source} has only {int(self.heldout_tokens.numel()):,} tokens; perplexity "
                f"needs at least {MIN_HELDOUT_SEGMENTS} windows of {seqlen} tokens. Upload a longer text."
            )
        k = total if n is None else min(int(n), total)
        return self.heldout_tokens[: k * seqlen].reshape(k, seqlen).clone()


def _encode(tokenizer: Any, s: str) -> torch.Tensor:
    import torch

    return torch.tensor(tokenizer(s, add_special_tokens=False)["input_ids"], dtype=torch.long)


def tokenize_split(tokenizer: Any, text: str | None = None, source: str | None = None) -> TextSplit:
    """Tokenise the built-in corpus (``text=None``) or ``text`` into a :class:`TextSplit` (70 / 30, no BOS token)."""
    if text is None:
        text, source = builtin_text(), BUILTIN_NAME
    if not text or not text.strip():
        raise InputError(f"{source or 'The text'} is empty.")
    calib, held = split_text(text)
    return TextSplit(_encode(tokenizer, calib), _encode(tokenizer, held), source or "the uploaded text",
                     (len(calib), len(held)))


def tokenize_pair(tokenizer: Any, calib_text: str | None, eval_text: str | None,
                  calib_source: str = "the calibration file", eval_source: str = "the evaluation file") -> TextSplit:
    """Separate calibration and held-out texts (the CLI's ``--calib`` / ``--eval`` files). A missing one is taken
    from the built-in corpus's matching part."""
    b_cal, b_held = split_text(builtin_text())
    for t, name in ((calib_text, calib_source), (eval_text, eval_source)):
        if t is not None and not t.strip():
            raise InputError(f"{name} is empty.")
    cal = calib_text if calib_text is not None else b_cal
    held = eval_text if eval_text is not None else b_held
    source = (f"calibration: {calib_source if calib_text is not None else BUILTIN_NAME}; "
              f"held-out: {eval_source if eval_text is not None else BUILTIN_NAME}")
    return TextSplit(_encode(tokenizer, cal), _encode(tokenizer, held), source, (len(cal), len(held)))
