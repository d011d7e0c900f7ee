"""One sampling engine for every causal LM of the lab: N samples per prompt in one batch with a KV cache.

:func:`sample` ``(model, prompts, config, seed)`` -> :class:`Samples` runs the B prompts x N samples as one batch of
R = B N rows: one prefill pass over the B prompts (left-padded when their lengths differ), its cache repeated N
times, then one forward pass per generated token for all rows. Each step draws from the model's next-token
distribution with temperature, top-k and top-p (:class:`SamplingConfig`); temperature 0 is greedy (``argmax``, the
first index among ties). A row ends at an end-of-sequence token (kept in ``token_ids``, left out of ``text``), at a
stop string (the text is cut right after its first occurrence) or when its budget is spent (``max_new_tokens``, and
never past the model's positions).

Models (:func:`adapter`, one interface :class:`LMAdapter`): the tiny reasoner (:class:`backend.models.tinyreasoner.
TinyReasoner`), any :class:`backend.reasoning.lm.ReasoningLM` (tiny reasoner, SmolLM2, Qwen2.5-Coder, folders) and
any :class:`backend.models.lm.CausalLM` (SmolLM2 from ``backend.models.lm``, Qwen2.5-Coder from
``backend.models.coder``). All are transformers causal LMs taking ``input_ids``, ``attention_mask``,
``position_ids`` and ``cache``; the adapter only knows the prompt format, the tokenizer, the end tokens and the
number of positions. A string prompt is a question in the model's prompt format; a list of ints is used as is.

Randomness: sample i of a prompt reads the uniform numbers of its own counter-based stream (splitmix64 keyed by a
sha256 of the seed, i and the prompt's token ids; one number per step, inverse-CDF sampling over the probabilities
sorted in descending order). So a sample depends only on (model, prompt, config, seed, i): the same with any other
prompts in the batch and any N, and ``sample(m, [p], replace(c, n=1), seed, first_sample=i)`` gives sample i of
``sample(m, [p], c, seed)`` (up to float rounding of the batched forward pass, which can move a draw only when its
uniform falls within ~1e-7 of a boundary of the cumulative distribution).

What a verifier needs: ``logprobs`` [B, N, T] (log-probability of each generated token under the model's own
distribution, temperature 1, no filtering; equal to a full forward pass), ``sample_logprobs`` (under the distribution
actually sampled from; 0 when greedy), ``entropies`` [B, N, T] (of the model's distribution, nats) and, with
``hidden_layer`` set, the hidden states of that layer (0 = the embeddings, -1 = the last, as transformers'
``output_hidden_states``) at every generated token, at the last one, or at step boundaries (the tokens that complete
one of ``boundaries``; the last token always ends a step): ``hidden[b][i]`` [P, D] at the token indices
``hidden_positions[b][i]``. Hidden states cost one extra forward pass at the end (the last tokens are fed once).

Shapes: ``token_ids`` [B, N, T] int64 (``pad_id`` past a row's end), ``lengths`` / ``finished`` [B, N], T the
longest row. Deterministic for a seed. Bad input raises :class:`backend.errors.InputError`.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..runtime import CancelToken, Progress, report

MAX_N = 256
MAX_ROWS = 2048
MAX_PROMPTS = 512
MAX_NEW_TOKENS = 4096
MAX_TEMPERATURE = 5.0
MAX_QUESTION_CHARS = 4000
MAX_STOP_STRINGS = 16
MAX_STOP_CHARS = 64
HIDDEN_AT = ("all", "last", "boundaries")
FINISH_REASONS = ("eos", "stop", "length")


@dataclass(frozen=True)
class SamplingConfig:
    """How to sample (validated on construction; out-of-range values raise InputError).

    ``n`` samples per prompt (1..256); ``max_new_tokens`` the budget per sample (1..4096); ``temperature`` 0
    (greedy) to 5; ``top_p`` in (0, 1] (1 = off): keep the smallest set of most likely tokens whose mass is >= p;
    ``top_k`` (0 = off) keep the k most likely tokens; ``stop`` up to 16 stop strings of 1..64 characters;
    ``hidden_layer`` the layer whose hidden states are returned (None = none); ``hidden_at`` ``all`` / ``last`` /
    ``boundaries``; ``boundaries`` the strings that end a reasoning step; ``kv_cache`` False recomputes the whole
    sequence every step (same tokens; for checks).
    """

    n: int = 1
    max_new_tokens: int = 128
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    stop: tuple[str, ...] = ()
    hidden_layer: int | None = None
    hidden_at: str = "all"
    boundaries: tuple[str, ...] = ("\n", ". ")
    kv_cache: bool = True

    def __post_init__(self) -> None:
        def whole(name: str, v: Any, lo: int, hi: int) -> None:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= int(v) <= hi:
                raise InputError(f"{name} must be a whole number from {lo} to {hi}; got {v!r}.")

        whole("The number of samples N", self.n, 1, MAX_N)
        whole("The token budget (max_new_tokens)", self.max_new_tokens, 1, MAX_NEW_TOKENS)
        whole("top_k", self.top_k, 0, 1_000_000)
        for name, v, ok, rng in (("The temperature", self.temperature, 0.0 <= _num(self.temperature) <= MAX_TEMPERATURE,
                                  f"from 0 (greedy) to {MAX_TEMPERATURE:g}"),
                                 ("top_p", self.top_p, 0.0 < _num(self.top_p) <= 1.0, "in (0, 1] (1 = off)")):
            if not ok:
                raise InputError(f"{name} must be {rng}; got {v!r}.")
        for what, strings in (("stop string", self.stop), ("step boundary", self.boundaries)):
            if isinstance(strings, str) or not isinstance(strings, (tuple, list)):
                raise InputError(f"Give the {what}s as a list of strings; got {strings!r}.")
            if len(strings) > MAX_STOP_STRINGS:
                raise InputError(f"At most {MAX_STOP_STRINGS} {what}s are accepted; got {len(strings)}.")
            for s in strings:
                if not isinstance(s, str) or not 1 <= len(s) <= MAX_STOP_CHARS:
                    raise InputError(f"Each {what} must be a string of 1 to {MAX_STOP_CHARS} characters; got {s!r}.")
        object.__setattr__(self, "stop", tuple(self.stop))
        object.__setattr__(self, "boundaries", tuple(self.boundaries))
        if self.hidden_layer is not None:
            whole("hidden_layer", self.hidden_layer, -1000, 1000)
        if self.hidden_at not in HIDDEN_AT:
            raise InputError(f"hidden_at must be one of {', '.join(HIDDEN_AT)}; got {self.hidden_at!r}.")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["stop"], d["boundaries"] = list(self.stop), list(self.boundaries)
        return d


def _num(v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return float("nan")
    return f if not isinstance(v, bool) else float("nan")


# -------------------------------------------------------------------------------------------------------- adapters


class LMAdapter:
    """What the engine needs to know about a causal LM: the transformers model, the prompt format, the tokenizer,
    the end tokens and the number of positions. Subclasses fill in :meth:`prompt_ids`, :meth:`decode` and
    :meth:`encode`."""

    name = "causal LM"

    def __init__(self, model: Any, eos_ids: set[int], pad_id: int, max_positions: int):
        self.model = model
        self.eos_ids = frozenset(int(i) for i in eos_ids if i is not None)
        self.pad_id = int(pad_id)
        self.max_positions = int(max_positions)

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_input_embeddings().weight.shape[0])

    def prompt_ids(self, question: str) -> list[int]:
        raise NotImplementedError

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError

    def decode(self, ids: list[int]) -> str:
        raise NotImplementedError


class TinyReasonerAdapter(LMAdapter):
    """The tiny reasoner: ``<bos>Question: ...`` as trained; text without special tokens."""

    name = "tinyreasoner"

    def __init__(self, reasoner: Any):
        tok = reasoner.tokenizer
        super().__init__(reasoner.model, {tok.eos_token_id}, tok.pad_token_id, reasoner.config.max_positions)
        self.reasoner, self.tokenizer = reasoner, tok

    def prompt_ids(self, question: str) -> list[int]:
        return list(self.reasoner.prompt_ids(question))

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text)

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special=True)


class ReasoningLMAdapter(LMAdapter):
    """A :class:`backend.reasoning.lm.ReasoningLM`: its prompt (the question, then the start-of-thinking marker)."""

    def __init__(self, lm: Any):
        pad = getattr(lm.tokenizer, "pad_token_id", None)
        super().__init__(lm.model, set(lm.eos_ids), pad if pad is not None else lm.tokenizer.eos_token_id,
                         lm.max_positions)
        self.lm, self.name = lm, lm.name

    def prompt_ids(self, question: str) -> list[int]:
        return list(self.lm.prompt_ids(question))

    def encode(self, text: str) -> list[int]:
        return list(self.lm.encode(text))

    def decode(self, ids: list[int]) -> str:
        return self.lm.decode(list(ids))


class CausalLMAdapter(LMAdapter):
    """A :class:`backend.models.lm.CausalLM` (SmolLM2, Qwen2.5-Coder, folders): the question as one user turn of
    the chat template (as ``CausalLM.generate``); the end tokens of the model's generation config."""

    def __init__(self, lm: Any, chat: bool = True):
        tok, model = lm.tokenizer, lm.model
        eos = {tok.eos_token_id}
        gen = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        eos.update(gen if isinstance(gen, (list, tuple)) else [gen])
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        super().__init__(model, eos, pad, int(getattr(model.config, "max_position_embeddings", 2048)))
        self.lm, self.chat, self.name = lm, chat, str(getattr(lm, "source", "causal LM"))

    def prompt_ids(self, question: str) -> list[int]:
        return [int(i) for i in self.lm._prompt_ids(question, self.chat)[0].tolist()]

    def encode(self, text: str) -> list[int]:
        return list(self.lm.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: list[int]) -> str:
        return self.lm.tokenizer.decode(list(ids), skip_special_tokens=True)


def adapter(model: Any) -> LMAdapter:
    """The adapter of a loaded model (an :class:`LMAdapter` is returned as is). Recognised by what the object has
    (this module imports no model module): a ReasoningLM has ``markers``, a CausalLM ``_prompt_ids``, a TinyReasoner
    a tokenizer with a fixed ``index``."""
    if isinstance(model, LMAdapter):
        return model
    if hasattr(model, "markers") and hasattr(model, "prompt_ids"):
        return ReasoningLMAdapter(model)
    if hasattr(model, "_prompt_ids") and hasattr(model, "tokenizer"):
        return CausalLMAdapter(model)
    if hasattr(getattr(model, "tokenizer", None), "index") and hasattr(model, "prompt_ids"):
        return TinyReasonerAdapter(model)
    raise InputError(f"Cannot sample from a {type(model).__name__}: give a TinyReasoner, a ReasoningLM or a CausalLM.")


def prompt_token_ids(lm: LMAdapter, prompt: Any, index: int = 0) -> list[int]:
    """Token ids of one prompt: a question (str, or UTF-8 bytes) in the model's prompt format, or a list of ids."""
    where = f"Prompt {index + 1}"
    if isinstance(prompt, (bytes, bytearray)):
        try:
            prompt = bytes(prompt).decode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError(f"{where} is not valid UTF-8 text (byte {err.start}): save it as UTF-8.") from None
    if isinstance(prompt, str):
        q = prompt.strip()
        if not q:
            raise InputError(f"{where} is empty: type a question.")
        if len(q) > MAX_QUESTION_CHARS:
            raise InputError(f"{where} has {len(q):,} characters; at most {MAX_QUESTION_CHARS:,} are accepted.")
        if "\x00" in q:
            raise InputError(f"{where} contains a NUL character; remove it.")
        ids = lm.prompt_ids(q)
    elif isinstance(prompt, (list, tuple)) or (hasattr(prompt, "tolist") and getattr(prompt, "ndim", 0) == 1):
        ids = [int(i) for i in (prompt.tolist() if hasattr(prompt, "tolist") else prompt)]
        if not ids:
            raise InputError(f"{where} has no tokens.")
        bad = [i for i in ids if not 0 <= i < lm.vocab_size]
        if bad:
            raise InputError(f"{where} has token ids outside the vocabulary (0..{lm.vocab_size - 1}): {bad[:3]}.")
    else:
        raise InputError(f"{where} must be a question (text) or a list of token ids; got {type(prompt).__name__}.")
    if len(ids) >= lm.max_positions:
        raise InputError(f"{where} has {len(ids)} tokens; the model has {lm.max_positions} positions and needs room "
                         "to answer: shorten it.")
    return ids


# ----------------------------------------------------------------------------------------------------- randomness

_MASK64 = (1 << 64) - 1


def stream_keys(seed: int, prompt_ids: list[int], first: int, n: int) -> np.ndarray:
    """[n] uint64 keys of the random streams of samples ``first .. first + n - 1`` of one prompt."""
    body = np.asarray(prompt_ids, dtype="<i8").tobytes()
    out = np.empty(n, dtype=np.uint64)
    for j in range(n):
        h = hashlib.sha256(f"{int(seed)}:{first + j}:".encode() + body).digest()
        out[j] = int.from_bytes(h[:8], "little")
    return out


def stream_uniforms(keys: np.ndarray, step: int) -> np.ndarray:
    """The ``step``-th uniform in [0, 1) of each stream (splitmix64, float64 from the top 53 bits)."""
    with np.errstate(over="ignore"):
        z = keys + np.uint64(((step + 1) * 0x9E3779B97F4A7C15) & _MASK64)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def choose(logits: Any, config: SamplingConfig, uniforms: np.ndarray | None) -> tuple[Any, Any]:
    """Next tokens [R] and their log-probabilities under the sampling distribution [R] from ``logits`` [R, V].

    Greedy (temperature 0): ``argmax``, log-probability 0. Otherwise the probabilities of ``logits / temperature``
    are sorted in descending order (stable: ties keep index order), the first ``top_k`` kept and, of those, the
    smallest prefix with mass >= ``top_p`` (a token is kept while the mass before it is < p); the kept mass is
    renormalised and token j is drawn by inverse CDF with one uniform per row."""
    import torch

    if config.greedy:
        return logits.argmax(-1), torch.zeros(logits.shape[0], dtype=torch.float64)
    probs = torch.softmax(logits.double() / config.temperature, dim=-1)
    sp, si = probs.sort(dim=-1, descending=True, stable=True)
    keep = torch.ones_like(sp, dtype=torch.bool)
    if config.top_k:
        keep[:, config.top_k:] = False
    if config.top_p < 1.0:
        keep &= (sp.cumsum(-1) - sp) < config.top_p
    sp = sp * keep
    cdf = sp.cumsum(-1)
    total = cdf[:, -1:]
    u = torch.as_tensor(uniforms, dtype=torch.float64).view(-1, 1)
    j = torch.searchsorted(cdf, u * total, right=True)
    j = torch.minimum(j, keep.sum(-1, keepdim=True) - 1)
    tok = si.gather(1, j).squeeze(1)
    lp = (sp.gather(1, j) / total).log().squeeze(1)
    return tok, lp


# --------------------------------------------------------------------------------------------------------- result


@dataclass
class Samples:
    """N samples for each of B prompts (see the module docstring for every field's meaning)."""

    token_ids: Any                    # [B, N, T] int64, pad_id past each row's end
    lengths: Any                      # [B, N] int64, generated tokens (an end token included)
    text: list[list[str]]             # [B][N] the generated text, end tokens left out, cut after a stop string
    logprobs: Any                     # [B, N, T] float32, model log-probability (temperature 1), 0 past the end
    sample_logprobs: Any              # [B, N, T] float32, log-probability under the sampling distribution
    entropies: Any                    # [B, N, T] float32, entropy of the model's distribution (nats)
    finished: Any                     # [B, N] bool: ended by an end token or a stop string
    finish_reason: list[list[str]]    # [B][N] "eos", "stop" or "length"
    prompt_ids: list[list[int]]       # [B] the prompts' token ids
    config: SamplingConfig
    seed: int
    first_sample: int = 0
    hidden: list[list[Any]] | None = None            # [B][N] tensor [P, D]
    hidden_positions: list[list[list[int]]] | None = None   # [B][N] token indices of those P states
    forward_passes: int = 0
    seconds: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def mask(self) -> Any:
        """[B, N, T] bool: the generated tokens of each row."""
        import torch

        return torch.arange(self.token_ids.shape[-1]) < self.lengths.unsqueeze(-1)

    def tokens(self, b: int, i: int) -> list[int]:
        """The generated token ids of prompt ``b``'s sample ``i`` (an end token included)."""
        return self.token_ids[b, i, : int(self.lengths[b, i])].tolist()

    @property
    def generated_tokens(self) -> int:
        return int(self.lengths.sum())


# --------------------------------------------------------------------------------------------------------- engine


def _forward(model: Any, ids: Any, cache: Any, mask: Any, positions: Any, hidden: bool) -> Any:
    kw: dict[str, Any] = {"input_ids": ids, "use_cache": cache is not False, "logits_to_keep": 1}
    if cache is not None and cache is not False:
        kw["cache"] = cache
    if mask is not None:
        kw["attention_mask"], kw["position_ids"] = mask, positions
    if hidden:
        kw["output_hidden_states"] = True
    return model(**kw)


def step_ends(lm: LMAdapter, toks: list[int], boundaries: tuple[str, ...]) -> list[int]:
    """Token indices that complete one of ``boundaries`` (the last token always)."""
    out, prev = [], 0
    for t in range(len(toks)):
        text = lm.decode(toks[: t + 1])
        count = sum(text.count(s) for s in boundaries)
        if count > prev or t == len(toks) - 1:
            out.append(t)
        prev = count
    return out


def _cut_at_stop(text: str, stops: tuple[str, ...]) -> str:
    ends = [text.find(s) + len(s) for s in stops if s in text]
    return text[: min(ends)] if ends else text


def sample(model: Any, prompts: list[Any], config: SamplingConfig | None = None, seed: int = 0,
           progress: Progress | None = None, first_sample: int = 0, cancel: CancelToken | None = None) -> Samples:
    """N samples (``config.n``) of each prompt in one batch; see the module docstring.

    ``model``: a TinyReasoner, ReasoningLM, CausalLM or :class:`LMAdapter`; ``prompts``: questions (str / UTF-8
    bytes) or token-id lists; ``first_sample``: the index of the first sample's random stream (draw samples 8..15
    later with ``first_sample=8``)."""
    import torch

    config = config or SamplingConfig()
    lm = adapter(model)
    if isinstance(prompts, (str, bytes)) or not isinstance(prompts, (list, tuple)):
        raise InputError("Give the prompts as a list (one question or token-id list per prompt).")
    if not 1 <= len(prompts) <= MAX_PROMPTS:
        raise InputError(f"Give 1 to {MAX_PROMPTS} prompts; got {len(prompts)}.")
    if len(prompts) * config.n > MAX_ROWS:
        raise InputError(f"{len(prompts)} prompts x N = {config.n} is {len(prompts) * config.n} samples in one batch; "
                         f"the limit is {MAX_ROWS}: lower N or split the prompts.")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 2**63:
        raise InputError(f"The seed must be a whole number from 0 to 2**63 - 1; got {seed!r}.")
    if isinstance(first_sample, bool) or not isinstance(first_sample, (int, np.integer)) or not 0 <= first_sample < 2**31:
        raise InputError(f"first_sample must be a whole number >= 0; got {first_sample!r}.")
    ids = [prompt_token_ids(lm, p, k) for k, p in enumerate(prompts)]
    B, N = len(ids), config.n
    R = B * N
    lens = [len(p) for p in ids]
    budgets = torch.tensor([min(config.max_new_tokens, lm.max_positions - n) for n in lens]).repeat_interleave(N)
    steps_max = int(budgets.max())
    padded = len(set(lens)) > 1
    L = max(lens)
    prompt = torch.full((B, L), lm.pad_id, dtype=torch.long)
    pmask = torch.zeros((B, L), dtype=torch.long)
    for b, p in enumerate(ids):
        prompt[b, L - len(p):] = torch.tensor(p)
        pmask[b, L - len(p):] = 1
    keys = None if config.greedy else np.concatenate([stream_keys(seed, p, first_sample, N) for p in ids])
    want_hidden = config.hidden_layer is not None
    model_ = lm.model
    n_layers = int(getattr(model_.config, "num_hidden_layers", 0))
    if want_hidden and n_layers and not -(n_layers + 1) <= config.hidden_layer <= n_layers:
        raise InputError(f"hidden_layer {config.hidden_layer} does not exist: the model has layers 0 (the embeddings) "
                         f"to {n_layers} (or -1 for the last).")
    t0 = time.perf_counter()

    tokens = torch.full((R, steps_max), lm.pad_id, dtype=torch.long)
    logprobs = torch.zeros((R, steps_max))
    sample_lp = torch.zeros((R, steps_max))
    entropies = torch.zeros((R, steps_max))
    lengths = torch.zeros(R, dtype=torch.long)
    done = torch.zeros(R, dtype=torch.bool)
    reason = ["length"] * R
    hidden_steps: list[Any] = []
    eos = torch.tensor(sorted(lm.eos_ids), dtype=torch.long)
    pad = torch.tensor(lm.pad_id)
    stop_window = max((len(s) for s in config.stop), default=0) + 2
    use_cache = config.kv_cache
    passes = 0

    def layer(out: Any) -> Any:
        return out.hidden_states[config.hidden_layer][:, -1].float()

    with torch.inference_mode():
        if use_cache:
            out = _forward(model_, prompt, None, pmask if padded else None,
                           (pmask.cumsum(-1) - 1).clamp_min(0) if padded else None, False)
            cache = out.cache
            if N > 1:
                cache.batch_repeat_interleave(N)
        else:
            out = _forward(model_, prompt, False, pmask if padded else None,
                           (pmask.cumsum(-1) - 1).clamp_min(0) if padded else None, False)
            cache = None
        passes += 1
        logits = out.logits[:, -1].float()
        if N > 1:
            logits = logits.repeat_interleave(N, dim=0)
        mask = pmask.repeat_interleave(N, dim=0) if padded else None
        seq = prompt.repeat_interleave(N, dim=0)
        for t in range(steps_max):
            if cancel is not None:
                cancel.check()
            logp = torch.log_softmax(logits, dim=-1)
            tok, slp = choose(logits, config, None if keys is None else stream_uniforms(keys, t))
            live = ~done
            tok = torch.where(live, tok, pad)
            # every row is written; the values past a row's end are zeroed once at the end
            tokens[:, t] = tok
            logprobs[:, t] = logp.gather(1, tok.view(-1, 1)).squeeze(1)
            sample_lp[:, t] = slp
            entropies[:, t] = -(logp.exp() * logp).nan_to_num().sum(-1)
            lengths += live
            is_eos = torch.isin(tok, eos) & live
            if bool(is_eos.any()):
                for r in torch.nonzero(is_eos).flatten().tolist():
                    done[r], reason[r] = True, "eos"
            if config.stop:
                for r in torch.nonzero(live & ~is_eos).flatten().tolist():
                    tail = lm.decode(tokens[r, max(0, t + 1 - stop_window): t + 1].tolist())
                    if any(s in tail for s in config.stop):
                        done[r], reason[r] = True, "stop"
            done |= lengths >= budgets
            if progress is not None:
                report(progress, (t + 1) / steps_max, f"sampling: token {t + 1} of at most {steps_max}")
            if bool(done.all()) and not want_hidden:
                break
            step_ids = tok.view(-1, 1)
            if mask is not None:
                mask = torch.cat([mask, torch.ones((R, 1), dtype=mask.dtype)], dim=1)
            positions = None
            if mask is not None:
                positions = (mask.sum(-1, keepdim=True) - 1) if use_cache else (mask.cumsum(-1) - 1).clamp_min(0)
            if use_cache:
                out = _forward(model_, step_ids, cache, mask, positions, want_hidden)
                cache = out.cache
            else:
                seq = torch.cat([seq, step_ids], dim=1)
                out = _forward(model_, seq, False, mask, positions, want_hidden)
            passes += 1
            if want_hidden:
                hidden_steps.append(layer(out))  # the state at generated token t
            if bool(done.all()):
                break  # with hidden states: the last tokens were fed once more for their states
            logits = out.logits[:, -1].float()
    seconds = time.perf_counter() - t0

    T = int(lengths.max()) if R else 0
    past = torch.arange(steps_max) >= lengths.unsqueeze(-1)
    tokens[past] = lm.pad_id
    for x in (logprobs, sample_lp, entropies):
        x[past] = 0.0
    toks_list = [tokens[r, : int(lengths[r])].tolist() for r in range(R)]
    texts = []
    for r in range(R):
        body = [i for i in toks_list[r] if i not in lm.eos_ids] if reason[r] == "eos" else toks_list[r]
        text = lm.decode(body)
        texts.append(_cut_at_stop(text, config.stop) if reason[r] == "stop" else text)
    hidden = positions_out = None
    if want_hidden:
        H = torch.stack(hidden_steps, dim=1) if hidden_steps else torch.zeros((R, 0, 0))  # [R, steps, D]
        hidden, positions_out = [], []
        for r in range(R):
            n_r = int(lengths[r])
            if config.hidden_at == "all":
                pos = list(range(n_r))
            elif config.hidden_at == "last":
                pos = [n_r - 1] if n_r else []
            else:
                pos = step_ends(lm, toks_list[r], config.boundaries)
            hidden.append(H[r, pos].clone())
            positions_out.append(pos)
        hidden = [hidden[b * N:(b + 1) * N] for b in range(B)]
        positions_out = [positions_out[b * N:(b + 1) * N] for b in range(B)]
    shape = (B, N, T)
    return Samples(
        token_ids=tokens[:, :T].reshape(shape).clone(), lengths=lengths.view(B, N),
        text=[texts[b * N:(b + 1) * N] for b in range(B)],
        logprobs=logprobs[:, :T].reshape(shape).clone(), sample_logprobs=sample_lp[:, :T].reshape(shape).clone(),
        entropies=entropies[:, :T].reshape(shape).clone(),
        finished=torch.tensor([x != "length" for x in reason]).view(B, N),
        finish_reason=[reason[b * N:(b + 1) * N] for b in range(B)], prompt_ids=ids, config=config,
        seed=int(seed), first_sample=int(first_sample), hidden=hidden, hidden_positions=positions_out,
        forward_passes=passes, seconds=seconds, meta={"model": lm.name, "padded": padded})


def greedy(model: Any, prompt: Any, max_new_tokens: int) -> Samples:
    """One greedy decode of one prompt (temperature 0, N = 1)."""
    return sample(model, [prompt], SamplingConfig(n=1, max_new_tokens=max_new_tokens, temperature=0.0), seed=0)
