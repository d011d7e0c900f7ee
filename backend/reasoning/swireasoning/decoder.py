"""SwiReasoning: training-free decoding that switches between latent and explicit reasoning on entropy trends.

Paper: "SwiReasoning: Switch-Thinking in Latent and Explicit for Pareto-Superior Reasoning LLMs", Shi, Asi, Li, Yuan,
Pan, Lee, Xiao (ICLR 2026). The controller follows the authors' released generation code step for step:

- a **latent** step feeds the probability-weighted embedding ``sum_v p(v) E[v]`` of the unfiltered softmax; an
  **explicit** step feeds ``E[token]`` of the sampled (or greedy) token. Single math symbols, digits and letters are
  always fed explicitly (the code's math-symbol list).
- decoding starts latent; the reference entropy is the first step's entropy. Latent -> explicit as soon as the entropy
  falls below the reference; explicit -> latent only when it rises above it, after at least ``W`` explicit steps, and
  not once the end-of-thinking marker has been sampled. The reference resets to the current entropy at every switch.
- blends at the transitions: the first step's soft embedding is ``0.9 e + 0.1 E[newline]``; entering latent feeds
  ``alpha e + (1 - alpha) E[<think>]``; entering explicit feeds ``beta e + (1 - beta) E[</think>]`` (``e`` the soft
  embedding, as in the code); alpha and beta ramp linearly from alpha0 = 1 and beta0 = 0.7 to 1 over the budget.
- switch cap ``C_max`` on latent -> explicit switches ``C``: at a switch with ``C_max <= C <= 2 C_max`` the end-of-thinking
  marker is injected; past ``2 C_max`` the end marker and the answer phrase are injected and at most 32 more tokens
  follow.

``W``: the code's default is 512, which forbids any explicit -> latent switch under budgets of 512 tokens or fewer;
:func:`effective_window` scales it to ``budget / 8`` there, and results carry the ``W`` used (labelled as our choice).

Public API: :class:`SwiRConfig`; :class:`Controller` (pure, no torch: ``step(...) -> Decision``, tested on scripted
entropy traces); :func:`decode` ``(lm, question, decoder, cfg, seed)`` -> :class:`Trace` for every decoder of
:data:`DECODERS` (ours and the baselines: CoT greedy and sampled, latent-only soft thinking, budget-forced CoT);
:func:`evaluate` over problems of :mod:`backend.reasoning.tasks`. Tensors: logits [V], embeddings [V, D].
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Any

from ...errors import InputError
from ...registry import Registry
from ...runtime import CancelToken, Progress, report

MATH_SYMBOLS = tuple("+-*/^=<>()[]{}_|") + tuple("0123456789") + tuple("abcdefghijklmnopqrstuvwxyz") + \
    tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


@dataclass
class SwiRConfig:
    """Decoding settings; defaults are the released evaluation's (``run.py``: no switch cap, alpha 1, temperature
    0.6, top-p 0.95, top-k 20); :data:`PROTOCOLS` holds its two published evaluation settings."""

    budget: int = 256               # max new tokens
    window: int = 512               # W: explicit steps before an explicit -> latent switch is allowed
    scale_window: bool = True       # W -> budget / 8 when W >= budget (our choice, labelled)
    alpha0: float = 1.0
    beta0: float = 0.7
    max_switch: int | None = None   # C_max; None = no cap
    termination_max_tokens: int = 32
    temperature: float = 0.6        # for the sampled decoders
    top_p: float = 0.95
    top_k: int = 20
    math_explicit: bool = True


#: The released evaluation's two settings (its README's two ``run.py`` commands): accuracy runs without a switch cap
#: (alpha 0.6), token-efficiency runs with the switch cap C_max = 2 (alpha 0.5).
PROTOCOLS: dict[str, dict[str, Any]] = {
    "accuracy": {"max_switch": None, "alpha0": 0.6},
    "efficiency": {"max_switch": 2, "alpha0": 0.5},
}


def protocol_config(protocol: str, **overrides: Any) -> SwiRConfig:
    """:class:`SwiRConfig` of one of :data:`PROTOCOLS` (``accuracy`` or ``efficiency``), with ``overrides``."""
    from ...registry import choose

    return SwiRConfig(**{**PROTOCOLS[choose(protocol, PROTOCOLS, "protocol")], **overrides})


def effective_window(cfg: SwiRConfig) -> int:
    if cfg.scale_window and cfg.window >= cfg.budget:
        return max(2, cfg.budget // 8)
    return cfg.window


@dataclass
class Decision:
    """What the controller decided at one step."""

    step: int
    token: int
    mode: str                 # "latent" | "explicit": how this step's token is fed back
    entropy: float
    reference: float
    switch: str | None        # "to_explicit" | "to_latent" | None
    injected: bool            # the token was forced by the switch cap
    feed: str                 # "soft", "token", "soft+newline", "soft+<think>", "soft+</think>"
    alpha: float
    beta: float
    switches: int
    finished: bool


@dataclass
class Controller:
    """The SwiReasoning state machine for one sequence (see the module docstring); ``latent_only`` never switches
    to explicit on entropy (soft thinking), ``explicit_only`` never goes latent (chain of thought)."""

    window: int
    budget: int
    alpha0: float = 1.0
    beta0: float = 0.7
    max_switch: int | None = None
    convergence_ids: list[int] = field(default_factory=list)
    termination_ids: list[int] = field(default_factory=list)
    termination_max_tokens: int = 32
    latent_only: bool = False
    explicit_only: bool = False
    mode: str = "latent"
    stay: int = 0
    reference: float = math.nan
    locked: bool = False
    switches: int = 0
    queue: list[int] = field(default_factory=list)
    injecting: bool = False
    answer_budget: int = -1

    def __post_init__(self) -> None:
        if self.explicit_only:
            self.mode = "explicit"

    def step(self, t: int, entropy: float, token: int, is_end_marker: bool, is_math: bool,
             eos: frozenset[int] = frozenset()) -> Decision:
        """One decoding step: ``token`` was sampled from the step's distribution of entropy ``entropy``."""
        self.locked = self.locked or is_end_marker
        injected = False
        if self.injecting and self.queue:
            token, injected = self.queue.pop(0), True
        if self.injecting and not self.queue:
            self.injecting = False
        to_explicit = to_latent = False
        if t == 0:
            self.reference = entropy
        else:
            self.stay += 1
            if not self.explicit_only:
                to_explicit = self.mode == "latent" and entropy < self.reference and not self.latent_only
                to_latent = (self.mode == "explicit" and entropy > self.reference and self.stay >= self.window
                             and not self.locked)
            if to_explicit:
                self.mode = "explicit"
            if to_latent:
                self.mode = "latent"
            if to_explicit or to_latent:
                self.stay, self.reference = 0, entropy
            self.switches += int(to_explicit)
        explicit = self.mode == "explicit" or self.locked or is_math
        alpha = self.alpha0 + (1 - self.alpha0) * t / self.budget
        beta = self.beta0 + (1 - self.beta0) * t / self.budget
        if not explicit:
            feed = "soft+newline" if t == 0 else ("soft+<think>" if to_latent and alpha < 1 else "soft")
        else:
            feed = "soft+</think>" if (t > 0 and to_explicit) else "token"
        if self.max_switch is not None and t > 0 and to_explicit:
            if self.max_switch <= self.switches <= 2 * self.max_switch:
                self.queue, self.injecting = list(self.convergence_ids), True
            elif self.switches > 2 * self.max_switch:
                self.queue, self.injecting = list(self.termination_ids), True
                self.answer_budget = self.termination_max_tokens
        if self.max_switch is not None and t > 0 and self.answer_budget >= 0:
            self.answer_budget -= 1
        finished = token in eos or self.answer_budget == 0
        return Decision(t, token, "explicit" if explicit else "latent", float(entropy), float(self.reference),
                        "to_explicit" if to_explicit else ("to_latent" if to_latent else None), injected, feed,
                        alpha, beta, self.switches, finished)


@dataclass
class Trace:
    """One decode: the generated text, the answer read from it, and the per-step controller record."""

    decoder: str
    text: str
    answer: int | None
    tokens: int
    steps: list[Decision]
    window: int
    seconds: float
    stopped: str              # "eos", "answer given", "answer budget", "token budget"
    forward_passes: int = 0   # model calls: the prefill (gives the first token) plus one per later token
    prompt_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["steps"] = [asdict(s) for s in self.steps]
        return d


@dataclass(frozen=True)
class DecoderMode:
    """How one decoder of :data:`DECODERS` feeds the model: explicit tokens only, latent steps only or switching;
    greedy or sampled; with the end-of-thinking marker forced before the answer reserve (budget forcing)."""

    sample: bool = False
    force_end: bool = False
    explicit_only: bool = False
    latent_only: bool = False


def math_token_ids(lm: Any) -> set[int]:
    """Ids of the tokens the math-symbol list encodes to (the released code's rule)."""
    ids: set[int] = set()
    for s in MATH_SYMBOLS:
        ids.update(lm.encode(s))
    return ids


def _sample(logits: Any, temperature: float, top_p: float, gen: Any, top_k: int = 0) -> int:
    """Temperature, then top-k (0: off), then top-p (nucleus) filtering, as transformers' sampling applies them."""
    import torch

    if 0 < top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_p < 1.0:
        sp, si = probs.sort(descending=True)
        keep = sp.cumsum(-1) - sp < top_p
        probs = torch.zeros_like(probs).scatter(0, si[keep], sp[keep])
        probs = probs / probs.sum()
    return int(torch.multinomial(probs, 1, generator=gen))


def decode(lm: Any, question: str, decoder: str = "swireasoning", cfg: SwiRConfig | None = None, seed: int = 0,
           cancel: CancelToken | None = None) -> Trace:
    """Decode ``question`` with ``decoder`` (a name of :data:`DECODERS`) on ``lm`` (a
    :class:`backend.reasoning.lm.ReasoningLM`)."""
    return DECODERS.get(decoder)(lm, question, cfg, seed, cancel, name=decoder)


def _decode(mode: DecoderMode, lm: Any, question: str, cfg: SwiRConfig | None = None, seed: int = 0,
            cancel: CancelToken | None = None, name: str = "") -> Trace:
    """Decode ``question`` on ``lm`` the way ``mode`` says; the trace carries ``name``."""
    import time

    import torch

    from ..tasks import extract_answer

    cfg = cfg or SwiRConfig()
    if not 8 <= cfg.budget <= 4096:
        raise InputError(f"The token budget must be between 8 and 4096, got {cfg.budget}.")
    prompt = lm.prompt_ids(question)
    if len(prompt) + cfg.budget > lm.max_positions:
        raise InputError(f"Prompt ({len(prompt)} tokens) plus budget ({cfg.budget}) exceed the model's "
                         f"{lm.max_positions} positions: shorten the question or lower the budget.")
    E = lm.embeddings
    close_ids = lm.encode(" " + lm.markers.think_close) or lm.encode(lm.markers.think_close)
    term_text = " " + lm.markers.think_close + (" " + lm.markers.answer_prefix if lm.markers.answer_prefix else "")
    newline = (lm.encode("\n") or lm.encode(" "))[-1]
    think = (lm.encode(lm.markers.think_open) or [newline])[-1]
    end_tok = close_ids[-1]
    window = effective_window(cfg)
    ctrl = Controller(window, cfg.budget, cfg.alpha0, cfg.beta0, cfg.max_switch, close_ids, lm.encode(term_text),
                      cfg.termination_max_tokens, latent_only=mode.latent_only,
                      explicit_only=mode.explicit_only)
    maths = math_token_ids(lm) if cfg.math_explicit else set()
    eos = frozenset(lm.eos_ids)
    gen = torch.Generator().manual_seed(seed)
    out: list[int] = []
    steps: list[Decision] = []
    close_text = lm.markers.think_close
    forced_at = cfg.budget - answer_reserve(cfg) if mode.force_end else None
    start, stopped = time.perf_counter(), "token budget"
    with torch.inference_mode():
        res = lm.model(input_ids=torch.tensor([prompt]), use_cache=True)
        passes = 1
        for t in range(cfg.budget):
            if cancel is not None:
                cancel.check()
            logits = res.logits[0, -1].float()
            probs = torch.softmax(logits, dim=-1)
            entropy = float(-(probs * probs.clamp_min(1e-12).log()).sum())
            tok = _sample(logits, cfg.temperature, cfg.top_p, gen, cfg.top_k) if mode.sample else int(logits.argmax())
            if forced_at is not None and t == forced_at and close_text not in lm.decode(out):
                ctrl.queue, ctrl.injecting = lm.encode(term_text), True
            tail = lm.decode(out[-8:] + [tok])
            d = ctrl.step(t, entropy, tok, tok == end_tok and tail.endswith(close_text), tok in maths, eos)
            steps.append(d)
            out.append(d.token)
            if d.finished:
                stopped = "eos" if d.token in eos else "answer budget"
                break
            if _answer_complete(lm.decode(out), lm.markers):
                stopped = "answer given"
                break
            if t == cfg.budget - 1:
                break  # the budget is spent: the last token is not fed back
            if d.mode == "latent" or d.feed == "soft+</think>":
                soft = probs @ E
                if d.feed == "soft+newline":
                    emb = 0.9 * soft + 0.1 * E[newline]
                elif d.feed == "soft+<think>":
                    emb = d.alpha * soft + (1 - d.alpha) * E[think]
                elif d.feed == "soft+</think>":
                    emb = d.beta * soft + (1 - d.beta) * E[end_tok]
                else:
                    emb = soft
            else:
                emb = E[d.token]
            res = lm.model(inputs_embeds=emb.view(1, 1, -1).to(E.dtype), cache=res.cache, use_cache=True)
            passes += 1
    text = lm.decode([s.token for s in steps if s.token not in eos])
    return Trace(name, text, extract_answer(text, lm.markers), len(steps), steps, window,
                 time.perf_counter() - start, stopped, passes, len(prompt))


def summarize(tr: Trace, lm: Any) -> dict[str, Any]:
    """A small JSON-able record of one decode for pages and the CLI: text, answer, costs and the per-step trace
    (entropy, reference entropy, feed mode ``L``/``E`` per step, switch steps, injected steps with their text)."""
    st = tr.steps
    return {
        "decoder": tr.decoder, "label": DECODERS.label(tr.decoder), "text": tr.text, "answer": tr.answer,
        "tokens": tr.tokens, "forward_passes": tr.forward_passes, "prompt_tokens": tr.prompt_tokens,
        "stopped": tr.stopped, "seconds": round(tr.seconds, 4), "window": tr.window,
        "latent_steps": sum(d.mode == "latent" for d in st), "switches": st[-1].switches if st else 0,
        "trace": {
            "entropy": [round(d.entropy, 5) for d in st],
            "reference": [round(d.reference, 5) for d in st],
            "modes": "".join("L" if d.mode == "latent" else "E" for d in st),
            "switch_steps": [[d.step, d.switch] for d in st if d.switch],
            "injected": [[d.step, lm.decode([d.token])] for d in st if d.injected],
            "pieces": [lm.decode([d.token]) for d in st],
        },
    }


def answer_reserve(cfg: SwiRConfig) -> int:
    """Budget forcing's room for the answer: the end marker is injected this many tokens before the budget ends
    (``termination_max_tokens``, at most a quarter of the budget and at least 4; our choice, so that tight budgets
    still leave room to reason)."""
    return min(cfg.termination_max_tokens, max(4, cfg.budget // 4))


def _answer_complete(text: str, markers: Any) -> bool:
    """After the end-of-thinking marker (or the answer phrase), a number followed by a non-digit ends the answer: every
    decoder stops there (our rule, the same for all, so that chat models do not ramble past their answer)."""
    import re

    cut = max(text.rfind(markers.think_close), text.rfind(markers.answer_prefix) if markers.answer_prefix else -1)
    return cut >= 0 and re.search(r"\d[^\d,.]|\d[.,]\D", text[cut:]) is not None


@dataclass
class EvalRow:
    decoder: str
    budget: int
    accuracy: float
    mean_tokens: float
    answered: float
    n: int
    seconds: float
    forward_passes: float = 0.0   # mean model calls per problem
    tokens_per_s: float = 0.0
    correct: list[int] = field(default_factory=list)  # per problem, in order (paired comparisons)
    tokens: list[int] = field(default_factory=list)   # generated tokens per problem


def evaluate(lm: Any, problems: list[Any], decoders: list[str], budgets: list[int], cfg: SwiRConfig | None = None,
             seed: int = 0, progress: Progress | None = None, cancel: CancelToken | None = None) -> list[EvalRow]:
    """Accuracy (exact final answer) and mean generated tokens per (decoder, budget) on ``problems``; sampled decoders
    use seed ``seed + problem index``."""
    cfg = cfg or SwiRConfig()
    rows, total, done = [], len(decoders) * len(budgets) * len(problems), 0
    for name in decoders:
        for b in budgets:
            c = replace(cfg, budget=b)
            ok = toks = answered = passes = 0
            secs = 0.0
            correct, tokens = [], []
            for i, p in enumerate(problems):
                tr = decode(lm, p.question, name, c, seed=seed + i, cancel=cancel)
                ok += int(tr.answer == p.answer)
                correct.append(int(tr.answer == p.answer))
                tokens.append(tr.tokens)
                answered += int(tr.answer is not None)
                toks += tr.tokens
                passes += tr.forward_passes
                secs += tr.seconds
                done += 1
                report(progress, done / total, f"{DECODERS.label(name)} at budget {b}: {i + 1}/{len(problems)}")
            n = max(1, len(problems))
            rows.append(EvalRow(name, b, ok / n, toks / n, answered / n, len(problems), round(secs, 2), passes / n,
                                round(toks / secs, 2) if secs > 0 else 0.0, correct, tokens))
    return rows


def pareto(rows: list[EvalRow]) -> list[bool]:
    """Per row: it solves something, and no other row has at least its accuracy with fewer mean tokens, or more
    accuracy with as few (a row at zero accuracy is on no front: spending fewer tokens on nothing is no trade-off)."""
    out = []
    for r in rows:
        dominated = any((o.accuracy >= r.accuracy and o.mean_tokens < r.mean_tokens) or
                        (o.accuracy > r.accuracy and o.mean_tokens <= r.mean_tokens) for o in rows if o is not r)
        out.append(r.accuracy > 0 and not dominated)
    return out


def rows_table(rows: list[EvalRow]) -> list[dict[str, Any]]:
    """The evaluation rows as dicts with the decoder's label, the accuracy per 100 tokens (token efficiency) and
    the Pareto flag."""
    front = pareto(rows)
    return [asdict(r) | {"label": DECODERS.label(r.decoder), "kind": DECODERS.kind(r.decoder),
                         "accuracy_per_100_tokens": round(100 * r.accuracy / r.mean_tokens, 4) if r.mean_tokens else 0.0,
                         "pareto": f} for r, f in zip(rows, front, strict=True)]


def scripted_run(entropies: list[float], window: int, max_switch: int | None = None, end_at: int | None = None,
                 budget: int = 1000, eos_at: int | None = None) -> list[Decision]:
    """The controller alone on a scripted entropy trace (tokens are the step indices; ``end_at``: the step at which
    the end-of-thinking marker is sampled; convergence ids ``[-1]``, termination ids ``[-2, -3]``)."""
    ctrl = Controller(window, budget, max_switch=max_switch, convergence_ids=[-1], termination_ids=[-2, -3])
    out = []
    for t, h in enumerate(entropies):
        d = ctrl.step(t, h, t, t == end_at, False, frozenset({eos_at}) if eos_at is not None else frozenset())
        out.append(d)
        if d.finished:
            break
    return out


# name -> decode(lm, question, cfg=None, seed=0, cancel=None, name=...) -> Trace
DECODERS: Registry[Callable[..., Trace]] = Registry("reasoning decoder")
DECODERS.add("swireasoning", partial(_decode, DecoderMode()), label="SwiReasoning (ours, greedy)", kind="ours")
DECODERS.add("swireasoning_sample", partial(_decode, DecoderMode(sample=True)), label="SwiReasoning (sampled)",
             kind="ours")
DECODERS.add("cot_greedy", partial(_decode, DecoderMode(explicit_only=True)), label="CoT greedy", kind="baseline")
DECODERS.add("cot_sample", partial(_decode, DecoderMode(explicit_only=True, sample=True)),
             label="CoT sampled (T 0.6, top-p 0.95, top-k 20)", kind="baseline")
DECODERS.add("soft_thinking", partial(_decode, DecoderMode(latent_only=True)), label="Latent only (soft thinking)",
             kind="baseline")
DECODERS.add("budget_forced", partial(_decode, DecoderMode(explicit_only=True, force_end=True)),
             label="Budget-forced CoT", kind="baseline")


def mode_of(name: str) -> DecoderMode:
    """The :class:`DecoderMode` of a decoder of :data:`DECODERS`."""
    return DECODERS.get(name).args[0]


def greedy_decoders() -> tuple[str, ...]:
    """The decoders that sample nothing, in registry order (the evaluation's default set)."""
    return tuple(n for n in DECODERS if not mode_of(n).sample)


def random_trace(n: int, seed: int = 0) -> list[float]:
    """A random entropy trace (for property tests of the controller)."""
    rng = random.Random(seed)
    return [rng.uniform(0.0, 5.0) for _ in range(n)]
