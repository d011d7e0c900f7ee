"""D2F against its baselines on the reasoning tasks: one question, or accuracy and cost over many.

Models (all trained here on the same data, :mod:`backend.reasoning.tasks` split ``train``, and sharing one tokenizer):
the D2F **student** (block-causal, ``assets/d2f_student.safetensors``), its bidirectional **teacher**
(``assets/d2f_teacher.safetensors``; both ``python -m backend.train d2f``) and the autoregressive **tiny reasoner** of
the same size (``assets/tinyreasoner.safetensors``, ``python -m backend.train tinyreasoner``).

Decoders (:data:`DECODERS`):

==============  ===============================================================================  ========
name            what                                                                             kind
==============  ===============================================================================  ========
d2f             student, pipelined parallel block decoding with the exact KV cache               ours
d2f_nocache     the same schedule recomputing every position each pass (tokens identical)        ablation
vanilla         teacher, ``steps`` full-recompute passes over the whole length (a sweep; Dream)  baseline
vanilla_blocks  the same in semi-autoregressive blocks of the student's size (a sweep; LLaDA)    baseline
threshold       teacher, cache-free: each pass fills every position above ``tau_conf``           baseline
ar              tiny reasoner, greedy next-token decoding with a KV cache                        baseline
==============  ===============================================================================  ========

Costs: forward passes per generated token (up to ``<eos>``; the prompt pass counted), tokens per second of wall
time on this machine (one thread), and the positions each pass computes. Accuracy: the exact final answer read from
``<think> ... </think> answer``.

Public API: :func:`load_models`, :func:`prompt_ids`, :func:`run_one` ``(models, question, name, cfg, steps)`` ->
dict, :func:`evaluate` -> list of :class:`EvalRow`, :func:`state_grid` (decode passes x positions, for the grid view).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from ...errors import InputError
from ...registry import Registry
from ...runtime import CancelToken, Progress, report
from .decode import D2FConfig, DecodeResult, d2f_decode, threshold_decode, vanilla_decode

MAX_QUESTION_CHARS = 400
#: The autoregressive reasoner's entry in ``D2FModels.parameters``.
REASONER_KEY = "ar"
#: The vanilla sweep: 1, 1.5, 2, 3, 4, 6 and 8 positions per pass over the trained 160 positions (rounded).
VANILLA_STEPS = (160, 107, 80, 53, 40, 27, 20)

@dataclass
class D2FModels:
    """The three models and what decoding needs to know about them."""

    student: Any
    teacher: Any
    ar: Any            # the tiny reasoner's weights in this package's DiffusionLM (causal attention), or None
    tokenizer: Any
    length: int        # the diffusion models' trained generation length
    block: int         # the student's trained block size
    parameters: dict[str, int]

    @property
    def mask_id(self) -> int:
        return self.tokenizer.index["<mask>"]

    @property
    def eos_id(self) -> int:
        return self.tokenizer.eos_token_id


def load_models(student: str | None = None, teacher: str | None = None, ar: str | None = None,
                with_ar: bool = True) -> D2FModels:
    """The shipped models (``None``) or other files of the same training scripts."""
    from ...models.tinyreasoner import TinyTokenizer, load_tinyreasoner
    from ...runtime import ASSETS
    from .diffusion_lm import from_autoregressive, load_diffusion_lm

    s, extra = load_diffusion_lm(student or ASSETS / "d2f_student.safetensors")
    t, _ = load_diffusion_lm(teacher or ASSETS / "d2f_teacher.safetensors")
    tok = TinyTokenizer(extra["vocab"])
    r = None
    if with_ar:
        reasoner = load_tinyreasoner(ar)
        if reasoner.tokenizer.vocab != tok.vocab:
            raise InputError("The tiny reasoner's vocabulary differs from the D2F models': retrain them together.")
        r = from_autoregressive(reasoner.model, len(tok)).eval()
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    params = {"student": count(s), "teacher": count(t)}
    if r is not None:
        params[REASONER_KEY] = count(r)
    return D2FModels(s, t, r, tok, int(extra["length"]), int(extra["block"]), params)


def prompt_ids(tok: Any, question: str, diffusion: bool = True) -> list[int]:
    """The prompt as trained: ``<bos>Question: ... <think>``; decoding starts after the marker."""
    from ...models.tinyreasoner import prompt_text

    q = question.strip()
    if not q:
        raise InputError("The question is empty.")
    if len(q) > MAX_QUESTION_CHARS:
        raise InputError(f"The question has {len(q)} characters; at most {MAX_QUESTION_CHARS} fit the models' "
                         "256 positions with the answer.")
    if diffusion:
        return tok.encode(prompt_text(q) + " <think>", bos=True)
    return tok.encode(prompt_text(q), bos=True) + tok.encode(" <think>")


def ar_decode(model: Any, prompt: list[int], eos_id: int, max_new: int) -> DecodeResult:
    """Greedy autoregressive decoding of the tiny reasoner's weights held in a :class:`DiffusionLM` (the same module,
    attention kernel and KV cache as D2F's decoder; causal attention): one forward pass per token, the prompt pass
    first, up to ``<eos>`` (left out of the tokens). The tokens equal the transformers model's greedy ones."""
    import torch

    t0 = time.perf_counter()
    p = len(prompt)
    n = max(0, min(max_new, model.cfg.max_positions - p))
    causal = torch.ones(p + n, p + n, dtype=torch.bool).tril()
    out: list[int] = []
    with torch.inference_mode():
        logits, kv = model(torch.tensor([prompt]), causal[:p, :p], return_kv=True)
        passes = 1
        for i in range(n):
            nxt = int(logits[0, -1].argmax())
            if nxt == eos_id:
                break
            out.append(nxt)
            if i == n - 1:
                break
            t = p + i
            logits, kv = model(torch.tensor([[nxt]]), causal[t:t + 1, :t + 1], start=t, past=kv, return_kv=True)
            passes += 1
    return DecodeResult("ar", out, passes, time.perf_counter() - t0, list(range(1, len(out) + 1)))


def _check_length(models: D2FModels, prompt: list[int], new: int) -> None:
    if len(prompt) + new > models.student.cfg.max_positions:
        raise InputError(f"The prompt ({len(prompt)} tokens) plus {new} generated positions exceed the models' "
                         f"{models.student.cfg.max_positions}: shorten the question.")


def _d2f(models: D2FModels, prompt: list[int], cfg: D2FConfig, steps: int | None, use_cache: bool = True
         ) -> DecodeResult:
    _check_length(models, prompt, -(-cfg.max_new // cfg.block) * cfg.block)
    res = d2f_decode(models.student, prompt, models.mask_id, models.eos_id, cfg, use_cache=use_cache)
    res.decoder = "d2f" if use_cache else "d2f_nocache"
    return res


def _d2f_nocache(models: D2FModels, prompt: list[int], cfg: D2FConfig, steps: int | None) -> DecodeResult:
    return _d2f(models, prompt, cfg, steps, use_cache=False)


def _vanilla(models: D2FModels, prompt: list[int], cfg: D2FConfig, steps: int | None, blocks: bool = False
             ) -> DecodeResult:
    _check_length(models, prompt, cfg.max_new)
    return vanilla_decode(models.teacher, prompt, models.mask_id, models.eos_id, cfg.max_new, steps or cfg.max_new,
                          block=cfg.block if blocks else None)


def _vanilla_blocks(models: D2FModels, prompt: list[int], cfg: D2FConfig, steps: int | None) -> DecodeResult:
    return _vanilla(models, prompt, cfg, steps, blocks=True)


def _threshold(models: D2FModels, prompt: list[int], cfg: D2FConfig, steps: int | None) -> DecodeResult:
    _check_length(models, prompt, cfg.max_new)
    return threshold_decode(models.teacher, prompt, models.mask_id, models.eos_id, cfg.max_new, cfg.tau_conf)


def _ar(models: D2FModels, prompt: list[int], cfg: D2FConfig, steps: int | None) -> DecodeResult:
    if models.ar is None:
        raise InputError("The autoregressive baseline is not loaded.")
    return ar_decode(models.ar, prompt, models.eos_id, cfg.max_new)


@dataclass(frozen=True)
class Decoder:
    """A decoder of the comparison: ``decode(models, prompt ids, cfg, steps) -> DecodeResult`` and what the rest of
    the package needs to know about it: the model it runs (``student``, ``teacher`` or ``autoregressive``), whether it
    is swept over step counts (full-recompute vanilla diffusion), whether its state grid follows the student's blocks,
    and whether the page draws its grid."""

    decode: Callable[[D2FModels, list[int], D2FConfig, int | None], DecodeResult]
    model: str
    sweep: bool = False
    blocks: bool = False
    drawn: bool = False

    def __call__(self, models: D2FModels, prompt: list[int], cfg: D2FConfig, steps: int | None) -> DecodeResult:
        return self.decode(models, prompt, cfg, steps)

    @property
    def autoregressive(self) -> bool:
        return self.model == AUTOREGRESSIVE


#: The model of the autoregressive baseline (``D2FModels.ar``; its prompt has no diffusion marker layout).
AUTOREGRESSIVE = "autoregressive"
DECODERS: Registry[Decoder] = Registry("diffusion decoder")
DECODERS.add("d2f", Decoder(_d2f, "student", blocks=True, drawn=True), label="D2F (ours: pipelined blocks, KV cache)",
             kind="ours")
DECODERS.add("d2f_nocache", Decoder(_d2f_nocache, "student", blocks=True), label="D2F schedule without cache",
             kind="ablation")
DECODERS.add("vanilla", Decoder(_vanilla, "teacher", sweep=True, drawn=True),
             label="Vanilla diffusion (teacher, full recompute)", kind="baseline")
DECODERS.add("vanilla_blocks", Decoder(_vanilla_blocks, "teacher", sweep=True, drawn=True),
             label="Vanilla diffusion, semi-AR blocks (teacher, full recompute)", kind="baseline")
DECODERS.add("threshold", Decoder(_threshold, "teacher", drawn=True),
             label="Confidence-threshold parallel (teacher, no cache)", kind="baseline")
DECODERS.add("ar", Decoder(_ar, AUTOREGRESSIVE), label="Autoregressive (same size and data, KV cache)",
             kind="baseline")
#: The decoders swept over step counts (both full-recompute vanilla diffusion).
VANILLA = tuple(n for n, d in DECODERS.items() if d.sweep)
#: The decoders whose decode-pass x position grid the page draws (D2F first).
GRID_DECODERS = tuple(n for n, d in DECODERS.items() if d.drawn)
#: The decoders of a comparison unless chosen otherwise: every one but the ablation.
COMPARED = tuple(n for n in DECODERS if DECODERS.kind(n) != "ablation")


def needs_reasoner(decoders: tuple[str, ...]) -> bool:
    """Whether any of ``decoders`` runs the autoregressive reasoner (so it must be loaded)."""
    return any(DECODERS[n].autoregressive for n in decoders)


def run_one(models: D2FModels, question: str, name: str, cfg: D2FConfig | None = None,
            steps: int | None = None) -> dict[str, Any]:
    """One decoder on one question: text, answer, forward passes, passes per token, tokens/s, and the raw result."""
    from ..tasks import MARKERS, extract_answer

    name = DECODERS.key(name)
    cfg = cfg or D2FConfig(block=models.block, max_new=models.length)
    prompt = prompt_ids(models.tokenizer, question, diffusion=not DECODERS[name].autoregressive)
    res = DECODERS.get(name)(models, prompt, cfg, steps)
    text = "<think>" + models.tokenizer.decode(res.tokens, skip_special=True)
    n = max(1, len(res.tokens))
    return {"decoder": name, "steps": (steps or cfg.max_new) if name in VANILLA else None, "text": text,
            "answer": extract_answer(text, MARKERS["tinyreasoner"]), "tokens": len(res.tokens),
            "forward_passes": res.forward_passes, "passes_per_token": res.forward_passes / n,
            "tokens_per_s": len(res.tokens) / max(res.seconds, 1e-9), "seconds": res.seconds,
            "prompt_tokens": len(prompt), "result": res}


def row_label(name: str, steps: int | None) -> str:
    return f"{DECODERS.label(name)}, {steps} steps" if name in VANILLA else DECODERS.label(name)


@dataclass
class EvalRow:
    decoder: str
    steps: int | None
    label: str
    accuracy: float
    passes_per_token: float
    tokens_per_s: float
    mean_tokens: float
    mean_passes: float
    seconds: float
    n: int
    correct: list[int]   # per problem, in order: 1 when the answer is right (paired comparisons)


def evaluate(models: D2FModels, problems: list[Any], cfg: D2FConfig | None = None,
             decoders: tuple[str, ...] = COMPARED,
             vanilla_steps: tuple[int, ...] = VANILLA_STEPS, progress: Progress | None = None,
             cancel: CancelToken | None = None) -> list[EvalRow]:
    """Accuracy and costs per decoder (the two vanilla decoders once per step count) on ``problems``. Passes per
    token and tokens/s are ratios of sums over the problems (total passes / total tokens, total tokens / total
    seconds)."""
    cfg = cfg or D2FConfig(block=models.block, max_new=models.length)
    plan = [(d, s) for d in decoders for s in (vanilla_steps if d in VANILLA else (None,))]
    rows, done = [], 0
    for name, steps in plan:
        toks = passes = 0
        secs = 0.0
        correct = []
        for p in problems:
            if cancel is not None:
                cancel.check()
            r = run_one(models, p.question, name, cfg, steps)
            correct.append(int(r["answer"] == p.answer))
            toks += r["tokens"]
            passes += r["forward_passes"]
            secs += r["seconds"]
            done += 1
            report(progress, done / (len(plan) * len(problems)), f"{row_label(name, steps)}: {p.question[:40]}")
        n = max(1, len(problems))
        rows.append(EvalRow(name, steps, row_label(name, steps), sum(correct) / n, passes / max(1, toks),
                            toks / max(secs, 1e-9), toks / n, passes / n, round(secs, 3), len(problems), correct))
    return rows


def rows_dicts(rows: list[EvalRow]) -> list[dict[str, Any]]:
    return [asdict(r) for r in rows]


#: Cell codes of :func:`state_grid` and their names (the figure's colour legend).
GRID_STATES = ("not added", "masked (semi-active)", "masked (fully active)", "decoded this pass", "decoded",
               "cached")


def state_grid(res: DecodeResult, block: int | None, length: int) -> list[list[int]]:
    """[passes][positions] codes of :data:`GRID_STATES` for the first ``length`` generated positions. ``block=None``
    (the cache-free baselines): one window over all positions, fully active."""
    at = list(res.grid_at or res.decoded_at)[:length]
    at += [-1] * (length - len(at))
    first = min((a for a in at if a >= 0), default=0)
    grid = []
    for s in range(first, res.forward_passes):
        row = []
        for i in range(length):
            if block is None:
                st = "full"
            else:
                b = i // block
                blocks = res.states[s - 1] if 0 < s <= len(res.states) else []
                st = blocks[b] if b < len(blocks) else None
            if at[i] == s:
                row.append(3)
            elif 0 <= at[i] < s:
                row.append(5 if st == "cached" else 4)
            elif st is None:
                row.append(0)
            else:
                row.append(1 if st == "semi" else 2 if st == "full" else 4)
        grid.append(row)
    return grid


#: The claim is only read when the best vanilla setting solves at least this share: below it, "95 % of the best
#: vanilla accuracy" compares one or two lucky answers.
MIN_VANILLA_ACCURACY = 0.25


def claim_verdict(rows: list[EvalRow]) -> dict[str, Any]:
    """D2F's checkable claims on ``rows`` (paired over the same problems):

    - **quality at fewer passes**: D2F reaches >= 95 % of the best vanilla accuracy (over both vanilla decoders and
      every step count) with fewer forward passes per token than every vanilla setting that reaches that level.
      ``reach`` / ``reach_ci``: the per-problem mean of ``d2f - 0.95 * best vanilla`` and its interval (above zero: it reaches;
      containing zero: the sample cannot tell). ``holds`` also needs the best vanilla accuracy to be at least
      :data:`MIN_VANILLA_ACCURACY` (``comparable``).
    - **faster than AR, read at matched accuracy**: the AR model runs through the same module and cache as D2F; the
      tokens/s ratio counts only when D2F's accuracy is within the interval of the paired difference to AR
      (``ar_gap_ci`` contains zero or lies above it: ``matched``); otherwise ``tokens_per_s_vs_ar_matched`` is None
      and ``matched_note`` says by how much D2F falls short.
    """
    from ...stats import paired_ci

    van = [r for r in rows if r.decoder in VANILLA]
    ours = next((r for r in rows if DECODERS.kind(r.decoder) == "ours"), None)
    if not van or ours is None:
        return {"evaluated": False, "why": "needs the d2f and vanilla rows"}
    best = max(van, key=lambda r: (r.accuracy, -r.passes_per_token))
    level = 0.95 * best.accuracy
    reach = [r for r in van if r.accuracy >= level]
    fewest = min(r.passes_per_token for r in reach)
    ar = next((r for r in rows if DECODERS[r.decoder].autoregressive), None)
    reach_ci = paired_ci(ours.correct, [0.95 * c for c in best.correct])
    out = {"evaluated": True, "n": ours.n, "best_vanilla_accuracy": best.accuracy, "best_vanilla_steps": best.steps,
           "best_vanilla_decoder": best.decoder,
           "d2f_accuracy": ours.accuracy,
           "accuracy_ratio": ours.accuracy / best.accuracy if best.accuracy else None,
           "reaches_95": best.accuracy > 0 and ours.accuracy >= level,
           **reach_ci.numbers("reach"),
           "vanilla_reaching_95": [f"{r.decoder} {r.steps}" for r in reach],
           "fewest_vanilla_passes_per_token_reaching": fewest, "d2f_passes_per_token": ours.passes_per_token,
           "fewer_passes": ours.passes_per_token < fewest,
           "tokens_per_s_vs_best_vanilla": ours.tokens_per_s / best.tokens_per_s,
           "tokens_per_s_vs_ar": ours.tokens_per_s / ar.tokens_per_s if ar else None}
    if ar is not None:
        gap = paired_ci(ours.correct, ar.correct)
        matched = bool(gap.high >= 0.0)
        out |= {"ar_accuracy": ar.accuracy, "ar_passes_per_token": ar.passes_per_token,
                **gap.numbers("ar_gap"), "matched": matched,
                "tokens_per_s_vs_ar_matched": out["tokens_per_s_vs_ar"] if matched else None,
                "matched_note": (f"D2F's accuracy {ours.accuracy:.2f} is within the interval of AR's "
                                 f"{ar.accuracy:.2f} (difference {gap.mean:+.2f}, [{gap.low:+.2f}, {gap.high:+.2f}])"
                                 if matched else
                                 f"no D2F setting here matches AR's accuracy: {ours.accuracy:.2f} vs {ar.accuracy:.2f} "
                                 f"(difference {gap.mean:+.2f}, [{gap.low:+.2f}, {gap.high:+.2f}]), so its speed "
                                 "is not compared with AR's")}
    out["comparable"] = best.accuracy >= MIN_VANILLA_ACCURACY
    out["holds"] = bool(out["comparable"] and out["reaches_95"] and out["fewer_passes"])
    return out


def block_invariance(models: D2FModels, seed: int = 0, trials: int = 4, blocks: int = 4) -> dict[str, Any]:
    """Largest |change| of the student's logits at blocks 0..i (prompt and generated) when every token of the
    blocks after i is re-drawn (random tokens and masks), over ``trials`` prompts and every i; the same for the
    bidirectional teacher as the contrast. Block-causal attention makes the student's change exactly zero up to
    float rounding (the claim: <= 1e-6)."""
    import torch

    from ..tasks import generate
    from .diffusion_lm import bidirectional_mask, block_causal_mask

    k = models.block
    g = torch.Generator().manual_seed(seed)
    worst_s = worst_t = 0.0
    vocab = models.student.cfg.vocab_size
    with torch.inference_mode():
        for p in generate(trials, "heldout", seed=seed, steps=(1, 3)):
            prompt = prompt_ids(models.tokenizer, p.question)
            n = len(prompt) + blocks * k
            base = torch.tensor(prompt + torch.randint(0, vocab, (blocks * k,), generator=g).tolist())[None]
            bc, bi = block_causal_mask(n, len(prompt), k), bidirectional_mask(n)
            ls, lt = models.student(base, bc), models.teacher(base, bi)
            for i in range(blocks - 1):
                cut = len(prompt) + (i + 1) * k
                other = base.clone()
                other[0, cut:] = torch.randint(0, vocab, (n - cut,), generator=g)
                other[0, cut::3] = models.mask_id
                worst_s = max(worst_s, float((models.student(other, bc)[0, :cut] - ls[0, :cut]).abs().max()))
                worst_t = max(worst_t, float((models.teacher(other, bi)[0, :cut] - lt[0, :cut]).abs().max()))
    return {"student_max_abs_change": worst_s, "teacher_max_abs_change": worst_t, "blocks": blocks, "block": k,
            "trials": trials, "holds": worst_s <= 1e-6}


MAX_QUESTIONS = 200


def parse_questions(text: str) -> list[tuple[str, int | None]]:
    """Questions of an uploaded text, one per line, each optionally ending with ``| answer`` (an integer); blank
    lines and lines starting with ``#`` are skipped. At most :data:`MAX_QUESTIONS`."""
    out: list[tuple[str, int | None]] = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        q, sep, a = line.rpartition("|") if "|" in line else (line, "", "")
        q = q.strip()
        answer = None
        if sep:
            try:
                answer = int(a.strip())
            except ValueError:
                raise InputError(f"Line {n}: the answer after '|' must be a whole number, got {a.strip()!r}.") from None
        if not q:
            raise InputError(f"Line {n}: the question is empty.")
        if len(q) > MAX_QUESTION_CHARS:
            raise InputError(f"Line {n}: {len(q)} characters; a question may have at most {MAX_QUESTION_CHARS}.")
        out.append((q, answer))
    if not out:
        raise InputError("The file holds no question (one per line, optionally '| answer').")
    if len(out) > MAX_QUESTIONS:
        raise InputError(f"The file holds {len(out)} questions; at most {MAX_QUESTIONS} per run.")
    return out
