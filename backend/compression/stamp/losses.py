"""Per-window losses of a causal LM and their cache: the perplexity of STaMP's evaluation is exp of the mean of the
windows' mean next-token NLL, and the per-window values let two activation-quantization methods be compared paired
over the same windows.

With a key (:func:`cache_key`: the token windows, the model's name, size and a weight checksum, the method's
:class:`~.stamp.QuantSpec`, feature transform, Hadamard block and seed, the weight bits and ``CACHE_VERSION``) each
batch's losses are stored as JSON under ``<cache_dir>/stamp/`` (:func:`backend.runtime.cache_dir`) and read back on
the next run; SmoothQuant, whose scales depend on calibration windows, is never cached.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ...runtime import Progress, report

if TYPE_CHECKING:
    import torch


CACHE_VERSION = 1  # part of every per-window cache key: change it when the quantization's arithmetic changes


def cache_key(model: Any, cfg: Any, method: Any) -> Callable[[torch.Tensor], str] | None:
    """The per-window cache key of ``method`` (an entry of :data:`.hooks.METHODS`) under ``cfg`` (an
    :class:`~.hooks.EvalConfig`) on ``model`` (a function of the windows [B, s]); None for a method whose activations
    depend on calibration data (SmoothQuant)."""
    import hashlib
    import json

    if method.feature == "smooth":
        return None
    spec = cfg.spec(method)
    p0 = model.model.layers[0].self_attn.q_proj.weight
    head = json.dumps({"v": CACHE_VERSION, "model": str(getattr(model.config, "_name_or_path", "")),
                       "params": sum(int(p.numel()) for p in model.parameters()), "w0": float(p0.detach().double().sum()),
                       "dtype": str(p0.dtype), "spec": asdict(spec) if spec else None, "feature": method.feature,
                       "block": cfg.hadamard_block, "seed": cfg.seed,
                       "weight_bits": cfg.weight_bits if spec else None}, sort_keys=True)

    def key(x: torch.Tensor) -> str:
        h = hashlib.sha256(head.encode())
        h.update(str(tuple(x.shape)).encode())
        h.update(x.to("cpu").numpy().tobytes())
        return h.hexdigest()[:32]

    return key


def window_nll(model: Any, ids: torch.Tensor, batch_size: int = 4, progress: Progress | None = None,
               key: Callable[[torch.Tensor], str] | None = None) -> list[float]:
    """Mean next-token NLL of each window of ``ids`` [M, s] (each window scored on its own); the perplexity is
    exp of their mean. With ``key`` (:func:`cache_key`) each batch's losses are read from / written to the user
    cache (``<cache_dir>/stamp/<key>.json``)."""
    import json

    from ...runtime import cache_dir
    from ..lm import batch_nll

    out: list[float] = []
    folder = cache_dir() / "stamp" if key is not None else None
    for i in range(0, ids.shape[0], batch_size):
        x = ids[i : i + batch_size]
        f = folder / f"{key(x)}.json" if folder is not None else None
        if f is not None and f.is_file():
            out.extend(float(v) for v in json.loads(f.read_text()))
        else:
            vals = batch_nll(model, x)
            if f is not None:
                f.parent.mkdir(parents=True, exist_ok=True)
                tmp = f.with_suffix(".tmp")
                tmp.write_text(json.dumps(vals))
                tmp.replace(f)
            out.extend(vals)
        report(progress, min(1.0, (i + batch_size) / ids.shape[0]), "perplexity")
    return out


__all__ = ["CACHE_VERSION", "cache_key", "window_nll"]
