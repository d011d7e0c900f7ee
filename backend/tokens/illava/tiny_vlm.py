"""A tiny vision-language model to run token reduction on: DINOv2 ViT-S/14 -> MLP projector -> SmolLM2-135M.

Design (our CPU miniature of a LLaVA-style model; the paper is arXiv 2412.06263, iLLaVA): the frozen embedded DINOv2
ViT-S/14 encodes a 224 x 224 image into 256 patch tokens (its class token stays in the encoder); a two-layer GELU MLP
(LLaVA-1.5's ``mlp2x_gelu``, 384 -> 576 -> 576) maps them into the embedding space of the frozen embedded SmolLM2-135M;
the prompt is ``"Image:" <256 image tokens> "\\nQ: <question>\\nA:"`` and the answer is the candidate word with the
highest next-token log-likelihood among the question's closed answer set (:mod:`.scenes`). The
projector and LoRA adapters on SmolLM2's q/v projections are trained (``python -m backend.train illava``; one file,
``assets/illava_projector.safetensors``); the adapters are folded into a private copy of those matrices at load time
(:func:`.projector.lora_merged_lm`), so the embedded SmolLM2 shared with other pages is never modified.

Token reduction runs in explicit loops over the encoder blocks and decoder layers, so that a merge can sit inside a
block: :mod:`.patch` (``vit`` and ``llama``); the plans are :mod:`.plan`, the merge
functions :mod:`.merging`, accuracy and timing :mod:`.evaluation`.

Everything is float32 on CPU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ...errors import InputError
from . import merging, scenes
from .patch import llama, vit
from .patch.llama import LLMRun
from .patch.vit import VitRun, run_vit
from .plan import ReductionPlan
from .projector import PROJECTOR_FILE, Projector, load_projector, lora_merged_lm

PREFIX = "Image:"
IMAGE_SIZE = 224


# ============================================================================================================ prompt
@dataclass(frozen=True)
class PromptIds:
    """Token ids of the prompt pieces: the text prefix, one question (``"\\nQ: ...\\nA:"``) and the answers."""

    prefix: list[int]
    answers: dict[str, int]

    @classmethod
    def build(cls, tokenizer: Any) -> PromptIds:
        ids = {}
        for word in scenes.ALL_ANSWERS:
            tok = tokenizer(" " + word, add_special_tokens=False)["input_ids"]
            if len(tok) != 1:
                raise RuntimeError(f"answer ' {word}' is not a single token for this tokenizer: {tok}")
            ids[word] = tok[0]
        return cls(prefix=tokenizer(PREFIX, add_special_tokens=False)["input_ids"], answers=ids)


def question_ids(tokenizer: Any, question: str) -> list[int]:
    """Ids of ``"\\nQ: <question>\\nA:"`` (the answer token follows the last id)."""
    q = " ".join(str(question).split())
    if not q:
        raise InputError("The question is empty: type a question about the image (e.g. 'What color is the circle?').")
    if len(q) > 300:
        raise InputError(f"The question has {len(q)} characters; keep it under 300.")
    return tokenizer("\nQ: " + q + "\nA:", add_special_tokens=False)["input_ids"]


# ============================================================================================================ costs
def vit_layer_macs(n_in: int, n_out: int, d: int = 384, mlp_ratio: int = 4) -> int:
    """Multiply-adds of one ViT block whose attention sees ``n_in`` tokens and whose MLP sees ``n_out`` (a merge sits
    between them): ``4 n_in d^2`` (q, k, v, o) ``+ 2 n_in^2 d`` (scores, mixing) ``+ 2 mlp_ratio n_out d^2``.
    With no merge that is the spec's ``12 N d^2 + 2 N^2 d``."""
    return 4 * n_in * d * d + 2 * n_in * n_in * d + 2 * mlp_ratio * n_out * d * d


def llm_layer_macs(n: int, d: int = 576, d_kv: int = 192, d_ff: int = 1536) -> int:
    """Multiply-adds of one Llama decoder layer over ``n`` prompt tokens (causal prefill): ``2 n d^2`` (q, o)
    ``+ 2 n d d_kv`` (k, v) ``+ 3 n d d_ff`` (SwiGLU) ``+ d n (n + 1)`` (causal scores and mixing)."""
    return 2 * n * d * d + 2 * n * d * d_kv + 3 * n * d * d_ff + d * n * (n + 1)


@dataclass
class Costs:
    """Per-layer multiply-adds of one request: ``vit [12]``, ``llm [30]``, the projector and the last-token head."""

    vit: list[int]
    llm: list[int]
    projector: int
    head: int

    @property
    def total(self) -> int:
        return int(sum(self.vit) + sum(self.llm) + self.projector + self.head)

    def to_dict(self) -> dict[str, Any]:
        return {"vit": self.vit, "llm": self.llm, "projector": self.projector, "head": self.head, "total": self.total}


# ============================================================================================================ model
@dataclass
class Answer:
    """The answer to one question: candidate words, their probabilities (softmax over the closed set), the pick."""

    answer: str
    candidates: list[str]
    probs: list[float]


class TinyVLM:
    """DINOv2 -> projector -> SmolLM2 with token reduction (see the module docstring). Load with :meth:`load`."""

    def __init__(self, vision: Any, lm: Any, projector: Projector, image_size: int = IMAGE_SIZE) -> None:
        lora = getattr(projector, "lora", None)
        if lora:  # the trained LoRA adapters go into a private copy of the adapted projections (shared LM untouched)
            from types import SimpleNamespace

            lm = SimpleNamespace(tokenizer=lm.tokenizer, model=lora_merged_lm(lm.model, lora), base=lm)
        self.vision, self.lm, self.projector = vision, lm, projector
        self.image_size = int(image_size)
        self.adapter = vit.apply_patch(vision.model)
        self.runner = llama.apply_patch(lm.model)
        self.ids = PromptIds.build(lm.tokenizer)
        self.answer_words = list(scenes.ALL_ANSWERS)
        self.answer_ids = torch.tensor([self.ids.answers[w] for w in self.answer_words])
        with torch.inference_mode():
            self.prefix_emb = self.runner.embed(torch.tensor(self.ids.prefix))[None].clone()
        self.patch = int(vision.patch_size)
        self.grid = self.image_size // self.patch

    @classmethod
    def load(cls, projector_path: str | Path = PROJECTOR_FILE, vision: Any = None, lm: Any = None) -> TinyVLM:
        """The shipped tiny VLM (embedded DINOv2 and SmolLM2 from :mod:`backend.models` unless given)."""
        from ...models import load

        proj = load_projector(projector_path)
        return cls(vision or load("dinov2"), lm or load("smollm2"), proj)

    # ---------------------------------------------------------------------------------------------- pieces
    @property
    def n_patches(self) -> int:
        return self.grid * self.grid

    @property
    def img_start(self) -> int:
        return self.prefix_emb.shape[1]

    def pixels(self, images: Sequence[Any]) -> torch.Tensor:
        return self.vision.preprocess(list(images), size=self.image_size)

    def encode(self, pixels: torch.Tensor, plan: ReductionPlan | None = None, record: bool = False,
               scores_override: Callable[[merging.TokenSet], torch.Tensor] | None = None
               ) -> tuple[torch.Tensor, torch.Tensor, VitRun]:
        """Pixels -> projected image tokens ``[B, N', 576]``, their sources over the ``N0`` patches, the run
        (``scores_override``: see :func:`.patch.vit.run_vit`, diagnostics only)."""
        run = run_vit(self.adapter, pixels, plan, record=record, scores_override=scores_override)
        p = self.adapter.prefix
        with torch.inference_mode():
            emb = self.projector(run.tokens[:, p:])
        return emb, run.state.source[:, p:, p:], run

    def question_embeds(self, questions: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded question embeddings ``[B, Lq, d]`` and lengths ``[B]``."""
        ids = [question_ids(self.lm.tokenizer, q) for q in questions]
        lens = torch.tensor([len(i) for i in ids])
        pad = torch.zeros(len(ids), int(lens.max()), dtype=torch.long)
        for b, i in enumerate(ids):
            pad[b, : len(i)] = torch.tensor(i)
        with torch.inference_mode():
            return self.runner.embed(pad), lens

    def answer_logits(self, last: torch.Tensor) -> torch.Tensor:
        """Final hidden states ``[B, d]`` -> logits of the answer words ``[B, A]`` (the full-vocabulary head runs,
        as in a real prefill, and the answer columns are read from it)."""
        with torch.inference_mode():
            return self.lm.model.lm_head(last)[:, self.answer_ids]

    def pick(self, logits: torch.Tensor, candidates: Sequence[str]) -> Answer:
        idx = [self.answer_words.index(c) for c in candidates]
        probs = logits[idx].float().softmax(-1)
        return Answer(candidates[int(probs.argmax())], list(candidates), [round(float(p), 4) for p in probs])

    # ----------------------------------------------------------------------------------------- single requests
    def prefill(self, pixels: torch.Tensor, question: str, plan: ReductionPlan | None = None, record: bool = False
                ) -> tuple[torch.Tensor, VitRun, LLMRun]:
        """One request through our loops (the reduced path): answer logits ``[A]``, the encoder run, the LLM run."""
        emb, src, vit = self.encode(pixels, plan, record=record)
        q, lens = self.question_embeds([question])
        seq = torch.cat([self.prefix_emb, emb, q], 1)
        last_idx = torch.tensor([seq.shape[1] - 1])
        llm = self.runner.prefill(seq, last_idx, self.img_start, emb.shape[1], src, plan, record=record)
        return self.answer_logits(llm.last)[0], vit, llm

    def reference_prefill(self, pixels: torch.Tensor, question: str) -> torch.Tensor:
        """The unreduced model on the libraries' own fast path (transformers forward, fused SDPA attention):
        answer logits ``[A]``. This is the baseline of every speed ratio."""
        p = self.adapter.prefix
        with torch.inference_mode():
            tokens = self.vision.model(pixel_values=pixels).last_hidden_state[:, p:]
            emb = self.projector(tokens)
            q, _ = self.question_embeds([question])
            seq = torch.cat([self.prefix_emb, emb, q], 1)
            logits = self.lm.model(inputs_embeds=seq, logits_to_keep=1).logits[0, -1]
        return logits[self.answer_ids]

    def costs(self, vit_counts: Sequence[int], llm_image_counts: Sequence[int], text_len: int) -> Costs:
        """Multiply-adds of one request given the encoder token counts (entering each block, plus the output) and
        the image tokens entering each decoder layer."""
        cfg = self.lm.model.config
        d, d_kv, d_ff = cfg.hidden_size, self.runner.kv_heads * self.runner.head_dim, cfg.intermediate_size
        dv = self.vision.model.config.hidden_size
        vit = [vit_layer_macs(vit_counts[i], vit_counts[i + 1], dv) for i in range(len(vit_counts) - 1)]
        other = self.img_start + text_len
        llm = [llm_layer_macs(n + other, d, d_kv, d_ff) for n in llm_image_counts]
        n_img = vit_counts[-1] - self.adapter.prefix
        proj = n_img * sum(m.weight.numel() for m in (self.projector.fc1, self.projector.fc2))
        return Costs(vit=vit, llm=llm, projector=int(proj), head=int(d * cfg.vocab_size))

    # ------------------------------------------------------------------------------------------------- helpers
    def seeded(self, plan: ReductionPlan | None, pixels: torch.Tensor) -> ReductionPlan | None:
        """For a method that draws from the plan's generator (random dropping): a per-image seed (plan seed mixed
        with a hash of the pixels), so that different images drop different tokens while every run on the same image
        and seed is identical."""
        if plan is None or merging.get_method(plan.method).needs != "generator":
            return plan
        import hashlib
        from dataclasses import replace

        salt = int(hashlib.sha1(pixels.numpy().tobytes()).hexdigest()[:8], 16)
        return replace(plan, seed=(int(plan.seed) * 1_000_003 + salt) % (2**62))
