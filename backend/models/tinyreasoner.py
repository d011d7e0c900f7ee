"""tinyreasoner: a small Llama-architecture causal LM trained by the project on the reasoning-task generator
(:mod:`backend.reasoning.tasks`) in the ``<think> steps </think> answer`` format.

It is a transformers ``LlamaForCausalLM`` (so every decoder written for transformers causal LMs, SmolLM2 and larger
checkpoints alike, runs on it unchanged: ``input_ids`` or ``inputs_embeds``, ``past_key_values``) with a tokenizer of
its own, :class:`TinyTokenizer`: greedy longest match over a fixed vocabulary of the words of the training
phrasings (with and without a leading space), single characters, single digits (numbers are spelled digit by digit)
and the special tokens ``<pad> <bos> <eos> <unk> <think> </think> <mask>`` (``<mask>`` is reserved for the
masked-diffusion variant). A word no training example contains is spelled letter by letter (training replaces some
words by random letter strings, so the model has read past spelled words), characters outside the vocabulary become
``<unk>``: any English question tokenizes. The prompt pads the question's whole numbers to the width of the
reasoning steps (:func:`prompt_text`).

- :class:`TinyReasonerConfig`: the architecture (defaults: 4 layers, hidden 192, 3 heads of 64, SwiGLU 512, 512 positions; 1.8M parameters).
- :func:`build` ``(cfg, vocab)`` -> (model, tokenizer); :func:`load_tinyreasoner` ``(path=None)`` -> :class:`TinyReasoner`
  from ``assets/tinyreasoner.safetensors`` (written by ``python -m backend.train tinyreasoner``).
- :class:`TinyReasoner` ``.generate(question, max_new_tokens)`` greedy with a KV cache (the sampling engine,
  :mod:`backend.reasoning.sampling`, at temperature 0); ``.prompt_ids(question)``.

Shapes: ``input_ids`` [B, T] int64, logits [B, T, V].
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..runtime import ASSETS

WEIGHTS = ASSETS / "tinyreasoner.safetensors"
TRAIN_COMMAND = "python -m backend.train tinyreasoner"
SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>", "<think>", "</think>", "<mask>")
_CHARS = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
          " .,?!;:()+-*/=$'%\"")


@dataclass
class TinyReasonerConfig:
    """Architecture of the tiny reasoner (a Llama decoder)."""

    n_layer: int = 4
    hidden: int = 192
    n_head: int = 3
    intermediate: int = 512
    max_positions: int = 512
    rope_theta: float = 10_000.0


def base_vocab() -> list[str]:
    """The vocabulary: specials, characters (with a leading-space variant), and the words of the training split's
    questions (both forms; the held-out phrasings' own words are not among them)."""
    import re

    from ..reasoning import tasks

    words: set[str] = set()
    for p in tasks.generate(3000, "grammar", seed=12345, steps=(1, 6)):
        words.update(re.findall(r"[A-Za-z]{2,}", p.question))
    words.update(["Question", "Compute", "The", "final", "answer", "is"])
    chars = list(_CHARS)
    vocab = list(SPECIALS) + chars + [" " + c for c in chars if c != " "]
    for w in sorted(words):
        vocab += [w, " " + w]
    seen: set[str] = set()
    return [t for t in vocab if not (t in seen or seen.add(t))]


class TinyTokenizer:
    """Greedy longest-match tokenizer over a fixed vocabulary (lossless for text made of vocabulary characters)."""

    def __init__(self, vocab: list[str]):
        self.vocab = list(vocab)
        self.index = {t: i for i, t in enumerate(self.vocab)}
        self.max_len = max(len(t) for t in self.vocab)
        for s in SPECIALS:
            setattr(self, s.strip("<>/").replace("/", "") + "_id", self.index[s])
        self.think_open_id, self.think_close_id = self.index["<think>"], self.index["</think>"]
        self.pad_token_id, self.eos_token_id, self.bos_token_id = self.index["<pad>"], self.index["<eos>"], self.index["<bos>"]

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, text: str, bos: bool = False) -> list[int]:
        """Token ids of ``text`` (``bos`` prepends ``<bos>``)."""
        out = [self.bos_token_id] if bos else []
        i, n = 0, len(text)
        while i < n:
            for L in range(min(self.max_len, n - i), 0, -1):
                tid = self.index.get(text[i : i + L])
                if tid is not None:
                    out.append(tid)
                    i += L
                    break
            else:
                out.append(self.index["<unk>"])
                i += 1
        return out

    def decode(self, ids: list[int], skip_special: bool = False) -> str:
        """The text of ``ids`` (specials kept unless ``skip_special``; ``<think>`` markers are always kept)."""
        keep = {"<think>", "</think>"}
        toks = [self.vocab[i] for i in ids if 0 <= i < len(self.vocab)]
        if skip_special:
            toks = [t for t in toks if t not in SPECIALS or t in keep]
        return "".join(toks)


def build(cfg: TinyReasonerConfig, vocab: list[str]) -> tuple[Any, TinyTokenizer]:
    """A freshly initialised model and its tokenizer."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = TinyTokenizer(vocab)
    hf = LlamaConfig(vocab_size=len(tok), hidden_size=cfg.hidden, intermediate_size=cfg.intermediate,
                     num_hidden_layers=cfg.n_layer, num_attention_heads=cfg.n_head, num_key_value_heads=cfg.n_head,
                     max_position_embeddings=cfg.max_positions, rope_theta=cfg.rope_theta, tie_word_embeddings=True,
                     pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                     attn_implementation="sdpa")
    model = LlamaForCausalLM(hf)
    return model, tok


def prompt_text(question: str) -> str:
    """The prompt the model was trained on (its answer follows after one space): the question with its whole numbers
    zero-padded to the width of the reasoning steps (``Compute 86 + 7.`` -> ``Question: Compute 0086 + 0007.``), so
    copying a number into a step is copying the same digits at the same offsets."""
    from ..reasoning.tasks import MARKERS, pad_numbers

    return f"Question: {pad_numbers(question.strip(), MARKERS['tinyreasoner'].pad)}"


@dataclass
class TinyReasoner:
    """A loaded tiny reasoner: the transformers model, its tokenizer and the file's metadata."""

    model: Any
    tokenizer: TinyTokenizer
    config: TinyReasonerConfig
    meta: dict

    @property
    def parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def prompt_ids(self, question: str) -> list[int]:
        """``<bos>Question: ...``: the prompt the model was trained on."""
        return self.tokenizer.encode(prompt_text(question), bos=True)

    def generate(self, question: str, max_new_tokens: int = 160) -> str:
        """Greedy continuation of the question's prompt, with a KV cache, up to ``<eos>`` (and never past the
        model's positions): :func:`backend.reasoning.sampling.greedy`."""
        from ..reasoning.sampling import greedy

        return greedy(self, question, max_new_tokens).text[0][0]


def load_tinyreasoner(path: str | Path | None = None) -> TinyReasoner:
    """The shipped tiny reasoner (``path=None``) or another file written by the same training script."""
    from .. import weights

    p = Path(path) if path else WEIGHTS
    tensors, meta = weights.load(p, made_by=TRAIN_COMMAND)
    cfg = TinyReasonerConfig(**meta.config)
    model, tok = build(cfg, meta.extra["vocab"])
    model.load_state_dict(tensors, strict=False)  # lm_head is tied to the embeddings and not stored
    model.eval()
    return TinyReasoner(model, tok, cfg, {"config": asdict(cfg), "quality": meta.quality, "command": meta.command})
