"""The LoRA fine-tuning reference of the GLOT page: LoRA on a copy of the backbone plus a linear head (``peft``), for
its accuracy and its cost beside GLOT's head on cached states.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ...errors import InputError
from ...runtime import Progress, report
from .backbone import Backbone
from .pooling import build_pooler


@dataclass
class LoraResult:
    """LoRA on the backbone + a linear head on the pooled vector (``peft``). ``seconds_per_epoch`` is measured over the
    steps run and scaled to a full epoch when ``max_steps`` cut it short (``extrapolated``)."""

    accuracy: float | None
    trainable_params: int
    backbone_params: int
    seconds_per_step: float
    seconds_per_epoch: float
    steps: int
    steps_per_epoch: int
    epochs: float
    extrapolated: bool
    rank: int
    pooling: str
    target_modules: list[str]
    cpu_seconds_per_step: float | None = None  # process CPU time (robust to other jobs on a shared machine)
    cpu_seconds_per_epoch: float | None = None


def lora_targets(model: nn.Module) -> list[str]:
    """The linear layers LoRA adapts: BERT's query/key/value/dense (as in the paper's commented configuration), or a
    Llama-style model's attention and MLP projections."""
    names = {n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, nn.Linear)}
    for group in (["query", "key", "value", "dense"],
                  ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
                  ["c_attn", "c_proj", "c_fc"]):
        hit = [g for g in group if g in names]
        if hit:
            return hit
    raise InputError("No known linear-layer names for LoRA in this backbone.")


def lora_reference(
    backbone: Backbone,
    train_texts: list[str],
    y_train: list[int],
    eval_texts: list[str] | None,
    y_eval: list[int] | None,
    *,
    rank: int = 64,
    alpha: int = 64,
    dropout: float = 0.1,
    lr: float = 5e-4,
    epochs: int = 1,
    batch_size: int = 16,
    max_tokens: int = 160,
    max_steps: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> LoraResult:
    """Fine-tune a copy of the backbone with LoRA (r=64, alpha=64, dropout 0.1 as in the paper's configuration) and a
    linear head on the mean-pooled (encoder) or last-token (decoder) state. The shared backbone is not modified.
    With ``max_steps`` only that many steps run (timing only; accuracy is then None unless ``eval_texts`` are given)."""
    from peft import LoraConfig, get_peft_model

    n_classes = int(max(y_train)) + 1
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        base = copy.deepcopy(backbone.model)
        for p in base.parameters():
            p.requires_grad_(False)
        targets = lora_targets(base)
        peft_model = get_peft_model(base, LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=dropout,
                                                     target_modules=targets, bias="none"))
        head = nn.Linear(backbone.hidden_size, n_classes)
    pooling = "cls" if backbone.is_decoder else "mean"
    pooler = build_pooler(pooling, backbone.hidden_size, is_decoder=backbone.is_decoder)
    params = [p for p in peft_model.parameters() if p.requires_grad] + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=lr)
    tok = backbone.tokenizer
    y = torch.tensor(y_train)
    gen = torch.Generator().manual_seed(seed)
    steps_per_epoch = math.ceil(len(train_texts) / batch_size)
    total_steps = steps_per_epoch * epochs if max_steps is None else min(max_steps, steps_per_epoch * epochs)
    step, step_time, step_cpu = 0, 0.0, 0.0

    def logits(texts: list[str]) -> torch.Tensor:
        enc = tok(texts, padding=True, truncation=True, max_length=max_tokens, return_tensors="pt")
        hid = peft_model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).last_hidden_state
        return head(pooler(hid, enc["attention_mask"]).z)

    while step < total_steps:
        perm = torch.randperm(len(train_texts), generator=gen)
        peft_model.train()
        for b in range(0, len(train_texts), batch_size):
            if step >= total_steps:
                break
            idx = perm[b:b + batch_size]
            t0, c0 = time.perf_counter(), time.process_time()
            loss = F.cross_entropy(logits([train_texts[i] for i in idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step_time += time.perf_counter() - t0
            step_cpu += time.process_time() - c0
            step += 1
            report(progress, 0.9 * step / total_steps, f"LoRA step {step}/{total_steps}, loss {float(loss.detach()):.3f}")
    acc = None
    if eval_texts and y_eval is not None:
        peft_model.eval()
        preds = []
        with torch.no_grad():
            for b in range(0, len(eval_texts), 32):
                preds.append(logits(eval_texts[b:b + 32]).argmax(-1))
        acc = float((torch.cat(preds) == torch.tensor(y_eval)).float().mean())
    report(progress, 1.0, "LoRA done")
    per_step = step_time / max(step, 1)
    cpu_step = step_cpu / max(step, 1)
    trainable = int(sum(p.numel() for p in params))
    return LoraResult(accuracy=acc, trainable_params=trainable, backbone_params=backbone.num_parameters(),
                      seconds_per_step=per_step, seconds_per_epoch=per_step * steps_per_epoch, steps=step,
                      steps_per_epoch=steps_per_epoch, epochs=step / steps_per_epoch,
                      extrapolated=step < steps_per_epoch * epochs, rank=rank, pooling=pooling,
                      target_modules=targets, cpu_seconds_per_step=cpu_step,
                      cpu_seconds_per_epoch=cpu_step * steps_per_epoch)
