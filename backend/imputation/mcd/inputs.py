"""The inputs of MCD: the ``channel_stack`` kind (a user's multi-channel image stack), its examples (one small valid
file and valid-but-odd variants, from which the bad-input corpus and the fuzzing tests are built), and the presets the
page and the CLI offer instead of an upload.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``channel_stack`` | ``backend.imputation.mcd.stack.read_stack`` | NPZ of one (12, H, W) array (TIFF not read) | 4 MB, 12 channels, 8-96 px per side, real dtype, finite, no constant channel | mcd page; ``mcd impute --stack`` |

``PRESETS``: synthetic test panels of the tissue generator (:data:`backend.imputation.mcd.tissue.PRESETS`, never
trained on).
"""

from __future__ import annotations

import io

import numpy as np

from ...io.registry import MB, InputKind, declare
from . import tissue

KINDS: tuple[InputKind, ...] = (
    declare(
        __name__,
        name="channel_stack",
        what="a multi-channel image stack",
        decoder="backend.imputation.mcd.stack:read_stack",
        extensions=("npz",),
        max_bytes=4 * MB,
        limits="NPZ with one float or integer array 'stack' of shape (12, H, W), channels in the page's order, 8-96 px "
               "per side, finite values, no object arrays (TIFF is not read: save it as NPZ); 4 MB",
        family="archive",
    ),
)
PRESETS = tissue.PRESETS

def channel_stack(seed: int = 0) -> bytes:
    """An NPZ synthetic tissue panel ``stack`` of shape (12, 16, 16) (small: the bad-input corpus derives from it)."""
    from .stack import to_bytes
    from .tissue import TissueConfig, one_image

    return to_bytes(one_image(np.random.default_rng(seed), TissueConfig(size=16))[0])


def channel_stack_odd() -> dict[str, bytes]:
    """Valid-but-odd stacks: 8 px per side, a batch of one, uint16 values, the array under another name."""
    from .tissue import TissueConfig, one_image

    small, batch, ints, other = io.BytesIO(), io.BytesIO(), io.BytesIO(), io.BytesIO()
    np.savez(small, stack=one_image(np.random.default_rng(1), TissueConfig(size=8))[0])
    np.savez_compressed(batch, stack=one_image(np.random.default_rng(2), TissueConfig(size=16))[0][None].astype(np.float32))
    np.savez(ints, stack=(one_image(np.random.default_rng(3), TissueConfig(size=20))[0] * 100).astype(np.uint16))
    np.savez_compressed(other, img=one_image(np.random.default_rng(4), TissueConfig(size=24))[0].astype(np.float64))
    return {"side8.npz": small.getvalue(), "batch_of_one.npz": batch.getvalue(), "uint16.npz": ints.getvalue(),
            "other_key_24px.npz": other.getvalue()}
