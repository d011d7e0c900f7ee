"""Example files of the ``channel_stack`` input kind (:mod:`backend.io.registry`): one small valid file and valid-but-odd
variants, from which the bad-input corpus and the fuzzing tests are built (the kind's decoder is
``backend.imputation.stack.read_stack``)."""

from __future__ import annotations

import io

import numpy as np


def channel_stack(seed: int = 0) -> bytes:
    """An NPZ synthetic tissue panel ``stack`` of shape (12, 16, 16) (small: the bad-input corpus derives from it)."""
    from .stack import to_bytes
    from .tissue import TissueConfig, one_image

    return to_bytes(one_image(np.random.default_rng(seed), TissueConfig(size=16))[0])


def channel_stack_odd() -> dict[str, bytes]:
    from .tissue import TissueConfig, one_image

    small, batch, ints, other = io.BytesIO(), io.BytesIO(), io.BytesIO(), io.BytesIO()
    np.savez(small, stack=one_image(np.random.default_rng(1), TissueConfig(size=8))[0])
    np.savez_compressed(batch, stack=one_image(np.random.default_rng(2), TissueConfig(size=16))[0][None].astype(np.float32))
    np.savez(ints, stack=(one_image(np.random.default_rng(3), TissueConfig(size=20))[0] * 100).astype(np.uint16))
    np.savez_compressed(other, img=one_image(np.random.default_rng(4), TissueConfig(size=24))[0].astype(np.float64))
    return {"side8.npz": small.getvalue(), "batch_of_one.npz": batch.getvalue(), "uint16.npz": ints.getvalue(),
            "other_key_24px.npz": other.getvalue()}
