"""Frozen encoder features, computed once per sample and cached: DINOv2 ViT-S/14 patch tokens of the 112-pixel image
(``[N, 64, 384]``, the 8 x 8 patch grid, row-major) and all-MiniLM-L6-v2 token states of the expression (``[N, T,
384]`` with a mask ``[N, T]``, T = :data:`MAX_TOKENS`, [CLS] and [SEP] included). Stored as float16 under
``cache_dir()/aml`` keyed by source, range and encoder; loading uses ``torch.load(weights_only=True)``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...runtime import cache_dir
from .data import SIZE, make_samples

if TYPE_CHECKING:
    import torch

MAX_TOKENS = 24
CACHE_VERSION = 1


@dataclass
class FeatureSet:
    """Cached inputs of the head. ``patches`` float16 ``[N, 64, 384]``; ``tokens`` float16 ``[N, T, 384]``;
    ``token_mask`` bool ``[N, T]``; ``images`` uint8 ``[N, 112, 112, 3]``; ``masks`` bool ``[N, 112, 112]``;
    ``texts`` and ``kinds`` (lists of N strings)."""

    patches: torch.Tensor
    tokens: torch.Tensor
    token_mask: torch.Tensor
    images: torch.Tensor
    masks: torch.Tensor
    texts: list[str]
    kinds: list[str]

    def __len__(self) -> int:
        return int(self.patches.shape[0])

    def subset(self, idx) -> FeatureSet:  # noqa: ANN001 - index tensor or slice
        ii = list(range(len(self)))[idx] if isinstance(idx, slice) else [int(i) for i in idx]
        return FeatureSet(self.patches[ii], self.tokens[ii], self.token_mask[ii], self.images[ii], self.masks[ii],
                          [self.texts[i] for i in ii], [self.kinds[i] for i in ii])


def encode_images(images: np.ndarray, vision=None, batch: int = 64) -> torch.Tensor:  # noqa: ANN001
    """uint8 ``[N, 112, 112, 3]`` -> DINOv2 patch tokens float32 ``[N, 64, 384]``."""
    import torch
    from PIL import Image

    from ...models.vision import load_vision_encoder

    vision = vision or load_vision_encoder()
    out = []
    for i in range(0, len(images), batch):
        pil = [Image.fromarray(np.asarray(a, np.uint8)) for a in images[i:i + batch]]
        out.append(vision.patch_features(pil, SIZE).float())
    return torch.cat(out, 0)


def encode_texts(texts: list[str], text=None) -> tuple[torch.Tensor, torch.Tensor]:  # noqa: ANN001
    """Expressions -> MiniLM token states float32 ``[N, MAX_TOKENS, 384]`` and mask bool ``[N, MAX_TOKENS]``
    (padding to MAX_TOKENS; longer expressions are cut)."""
    import torch

    from ...models.text import load_text_encoder

    text = text or load_text_encoder()
    hs, ms = [], []
    for i in range(0, len(texts), 128):
        h, m = text.hidden_states(list(texts[i:i + 128]), MAX_TOKENS)
        pad = MAX_TOKENS - h.shape[1]
        hs.append(torch.nn.functional.pad(h, (0, 0, 0, pad)))
        ms.append(torch.nn.functional.pad(m, (0, pad)).bool())
    return torch.cat(hs, 0), torch.cat(ms, 0)


def build(start: int, count: int, source: str, vision=None, text=None, cache: bool = True) -> FeatureSet:  # noqa: ANN001
    """The samples ``start .. start + count`` of ``source`` with their features (cached on disk)."""
    import torch

    path = cache_dir() / "aml" / f"v{CACHE_VERSION}_{source}_{start}_{count}.pt"
    samples = make_samples(start, count, source)
    images = torch.from_numpy(np.stack([s.image for s in samples]))
    masks = torch.from_numpy(np.stack([s.mask for s in samples]))
    texts, kinds = [s.text for s in samples], [s.kind for s in samples]
    if cache and path.exists():
        d = torch.load(path, weights_only=True)
        return FeatureSet(d["patches"], d["tokens"], d["token_mask"], images, masks, texts, kinds)
    patches = encode_images(np.stack([s.image for s in samples]), vision).half()
    tokens, tmask = encode_texts(texts, text)
    tokens = tokens.half()
    if cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        torch.save({"patches": patches, "tokens": tokens, "token_mask": tmask}, tmp)
        tmp.replace(path)
    return FeatureSet(patches, tokens, tmask, images, masks, texts, kinds)
