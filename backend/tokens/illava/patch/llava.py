"""The LLaVA patcher: the same reduction plans on a transformers ``LlavaForConditionalGeneration`` (CLIP/SigLIP vision
tower through :mod:`.vit`, Llama/Qwen2 language model through :mod:`.llama`), and a scan of the local Hugging Face
cache for such checkpoints (the lab never downloads).
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from ....errors import InputError
from ..plan import ReductionPlan
from .llama import LlamaRunner, LLMRun
from .vit import VitAdapter, VitRun, run_vit


def local_llava_checkpoints() -> list[str]:
    """LLaVA-family checkpoints in the local Hugging Face cache (the lab never downloads). Their CLIP/SigLIP vision
    tower and Llama/Qwen2 language model are the architectures :class:`VitAdapter` and :class:`LlamaRunner` patch."""
    import json
    import os

    roots = []
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME", os.path.join(os.path.expanduser("~"), ".cache", "huggingface")), "hub")
    if os.path.isdir(hub):
        roots = [os.path.join(hub, d) for d in os.listdir(hub) if d.startswith("models--")]
    found = []
    for root in roots:
        for cfg in Path(root).glob("snapshots/*/config.json"):
            try:
                kind = json.loads(cfg.read_text()).get("model_type", "")
            except (OSError, ValueError):
                continue
            if "llava" in str(kind) or str(kind) in ("qwen2_vl", "qwen2_5_vl", "internvl"):
                found.append(Path(root).name.removeprefix("models--").replace("--", "/"))
                break
    return sorted(set(found))


class LlavaPatched:
    """The same reduction plans on a transformers ``LlavaForConditionalGeneration`` (CLIP/SigLIP vision tower,
    Llama/Qwen2 language model): encoder merges in the tower up to its feature layer, LLM reductions over the image
    placeholder span. Only single-layer features (``vision_feature_layer`` an int) are supported."""

    def __init__(self, model: nn.Module) -> None:
        inner, cfg = model.model, model.config
        if not isinstance(cfg.vision_feature_layer, int):
            raise InputError("Only LLaVA checkpoints that read one vision feature layer are supported.")
        self.model = model
        self.vit = VitAdapter(inner.vision_tower)
        f = int(cfg.vision_feature_layer)
        self.n_blocks = self.vit.num_layers + 1 + f if f < 0 else f
        self.drop_cls = cfg.vision_feature_select_strategy == "default"
        self.projector = inner.multi_modal_projector
        self.runner = LlamaRunner(model, base=inner.language_model, config=cfg.text_config)
        self.image_token = int(cfg.image_token_index)

    def prefill(self, input_ids: torch.Tensor, pixel_values: torch.Tensor, plan: ReductionPlan | None = None,
                record: bool = False) -> tuple[torch.Tensor, VitRun, LLMRun]:
        """Next-token logits ``[V]`` of one prompt ``input_ids [1, L]`` whose image placeholders are contiguous."""
        where = torch.nonzero(input_ids[0] == self.image_token)[:, 0]
        if len(where) == 0 or int(where[-1] - where[0]) + 1 != len(where):
            raise InputError("The prompt needs one contiguous block of image placeholder tokens.")
        run = run_vit(self.vit, pixel_values, plan, record=record, n_blocks=self.n_blocks)
        p = self.vit.prefix if self.drop_cls else 0
        with torch.inference_mode():
            feats = self.projector(run.tokens[:, p:])
            start, stop = int(where[0]), int(where[-1]) + 1
            text = self.runner.embed(input_ids)
            seq = torch.cat([text[:, :start], feats, text[:, stop:]], 1)
            src = run.state.source[:, p:, p:] if self.drop_cls else run.state.source
            llm = self.runner.prefill(seq, torch.tensor([seq.shape[1] - 1]), start, feats.shape[1], src, plan,
                                      record=record)
            return self.model.lm_head(llm.last)[0], run, llm


def apply_patch(model: nn.Module) -> LlavaPatched:
    """A LLaVA-family model ready to prefill with a :class:`ReductionPlan` (see :class:`LlavaPatched`)."""
    return LlavaPatched(model)
