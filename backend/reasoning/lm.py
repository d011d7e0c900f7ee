"""One interface to the causal LMs the reasoning pages decode with: the tiny reasoner trained here, the embedded
SmolLM2-135M-Instruct, the optional Qwen2.5-Coder-1.5B-Instruct, or any local transformers causal-LM folder.

:class:`ReasoningLM` holds the transformers model, a tokenizer facade (``encode`` without special tokens, ``decode``),
the per-model thinking markers (:data:`backend.reasoning.tasks.MARKERS`) and the prompt format:

- ``tinyreasoner``: ``<bos>Question: ...`` exactly as trained; ``<think>`` / ``</think>`` are single tokens.
- chat models (SmolLM2, Qwen2.5-Coder, folders): one user turn of the chat template asking to reason step by step
  between the model's markers and to end with the answer, with one solved example (:data:`ONE_SHOT`, a problem of the
  training templates and range, so the held-out splits stay unseen); the assistant turn is opened with the start
  marker. Without the example SmolLM2 repeats its steps until the budget ends instead of answering. SmolLM2 has no
  thinking tokens, so its markers are plain text (``Reasoning:`` / ``Answer:``), each a few tokens.

:func:`load_reasoning_lm` ``(model_id)`` -> :class:`ReasoningLM`. Shapes: ``embeddings`` [V, D].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from .tasks import MARKERS, Markers

MODEL_IDS = ("tinyreasoner", "smollm2", "qwen2.5-coder")
MAX_QUESTION_CHARS = 1000
CHAT_INSTRUCTION = ("Solve the problem. Write your reasoning step by step after '{open}', then write '{close}' "
                    "followed by the final answer as a single number.")
#: The solved example of the chat prompt: (question, reasoning, answer), a ``shopping`` problem of the training range.
ONE_SHOT = ("Ana buys 3 pens at 4 dollars each and pays with 20 dollars. How much change does Ana get?",
            "3 * 4 = 12. 20 - 12 = 8.", "8")


@dataclass
class ReasoningLM:
    """A causal LM ready for the reasoning decoders (see the module docstring)."""

    name: str
    model: Any
    tokenizer: Any
    markers: Markers
    chat: bool
    source: str

    def encode(self, text: str) -> list[int]:
        if hasattr(self.tokenizer, "vocab") and hasattr(self.tokenizer, "index"):  # the tiny reasoner's tokenizer
            return self.tokenizer.encode(text)
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: list[int]) -> str:
        if hasattr(self.tokenizer, "index"):
            return self.tokenizer.decode(ids, skip_special=True)
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    @property
    def eos_ids(self) -> set[int]:
        ids = {self.tokenizer.eos_token_id}
        if self.chat:
            for t in ("<|im_end|>", "<|endoftext|>"):
                tid = self.tokenizer.convert_tokens_to_ids(t) if hasattr(self.tokenizer, "convert_tokens_to_ids") else None
                if isinstance(tid, int) and tid >= 0 and tid != getattr(self.tokenizer, "unk_token_id", None):
                    ids.add(tid)
        return {i for i in ids if i is not None}

    @property
    def embeddings(self) -> Any:
        return self.model.get_input_embeddings().weight

    @property
    def max_positions(self) -> int:
        return int(getattr(self.model.config, "max_position_embeddings", 2048))

    def prompt_ids(self, question: str) -> list[int]:
        """The prompt's token ids; decoding starts right after the start-of-thinking marker."""
        q = question.strip()
        if not q:
            raise InputError("The question is empty: type a question.")
        if len(q) > MAX_QUESTION_CHARS:
            raise InputError(f"The question has {len(q):,} characters; at most {MAX_QUESTION_CHARS:,} are accepted.")
        if not self.chat:
            from ..models.tinyreasoner import prompt_text

            return self.tokenizer.encode(prompt_text(q) + " " + self.markers.think_open, bos=True)
        m = self.markers
        instruction = CHAT_INSTRUCTION.format(open=m.think_open, close=m.think_close)
        ex_q, ex_steps, ex_a = ONE_SHOT
        content = (f"{instruction}\n\nExample problem: {ex_q}\n{m.think_open} {ex_steps}\n{m.think_close} {ex_a}"
                   f"\n\nProblem: {q}")
        msgs = [{"role": "user", "content": content}]
        text = self.tokenizer.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
        return list(self.tokenizer.encode(text + self.markers.think_open, add_special_tokens=False))


def check_question(q: Any, hint: str = "type a question or choose a preset") -> str:
    """The stripped question, else :class:`InputError` (empty, or over ``MAX_QUESTION_CHARS`` characters); ``hint``
    says what to do about an empty one."""
    q = (q or "").strip() if isinstance(q, str) or q is None else str(q).strip()
    if not q:
        raise InputError(f"The question is empty: {hint}.")
    if len(q) > MAX_QUESTION_CHARS:
        raise InputError(f"The question has {len(q):,} characters; at most {MAX_QUESTION_CHARS:,} are accepted.")
    return q


def load_reasoning_lm(model_id: str = "tinyreasoner", path: str | None = None) -> ReasoningLM:
    """``tinyreasoner`` (``path``: another file of its training script), ``smollm2``, ``qwen2.5-coder``, or a local
    causal-LM folder given as ``path`` with ``model_id="folder"``."""
    if model_id == "tinyreasoner":
        from ..models.tinyreasoner import load_tinyreasoner

        r = load_tinyreasoner(path)
        return ReasoningLM("tinyreasoner", r.model, r.tokenizer, MARKERS["tinyreasoner"], False, "tinyreasoner")
    if model_id == "smollm2":
        from ..models.lm import load_causal_lm

        lm = load_causal_lm(path)
        return ReasoningLM("smollm2", lm.model, lm.tokenizer, MARKERS["smollm2"], True, lm.source)
    if model_id == "qwen2.5-coder":
        from ..models.coder import load_coder

        lm = load_coder(path)
        return ReasoningLM("qwen2.5-coder", lm.model, lm.tokenizer, MARKERS["qwen2.5-coder"], True, lm.source)
    if model_id == "folder":
        if not path:
            raise InputError("The model 'folder' needs a path: a local transformers causal-LM folder.")
        from ..models.lm import load_causal_lm

        lm = load_causal_lm(path)
        return ReasoningLM("folder", lm.model, lm.tokenizer, MARKERS["smollm2"], True, lm.source)
    raise InputError(f"Unknown model {model_id!r}; choose one of {', '.join(MODEL_IDS)}, or 'folder' with a path.")
