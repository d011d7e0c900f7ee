"""Fine-tuning and evaluation of the four LM methods on cached backbone states, and the two non-LM baselines.

| method | adapters | outputs |
|--------|----------|---------|
| ST  | one LoRA per task | the LM head (numbers and class names as text) |
| MST | one LoRA per task | the task's decoupled head (classification MLP, regression MLP; LM head for extraction) |
| FT  | one shared LoRA | the LM head for every task |
| MFT | one shared LoRA | task-routed heads, weighted composite loss |

Metrics on the test elements: R^2 (regression, in the target's units), accuracy (classification), exact match
(extraction). Text answers of classification and extraction rows are scored by teacher forcing: greedy decoding gives
the reference answer exactly when every answer token (and the end token) is the argmax given the reference prefix, so
this is the exact-match of greedy generation. Text answers of regression rows are generated greedily with the full
model (the adapter patched in) and parsed; an unparseable answer counts as the training mean (the parse rate is reported).
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ...runtime import report
from .bench import Bench, Row, Task
from .heads import Adapter, MLPHead, TopLayer, cache_states

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class FitSettings:
    epochs: int = 3
    batch: int = 16
    lr: float = 3e-3
    head_lr: float = 3e-3
    rank: int = 4
    alpha: float = 8.0
    head_hidden: int = 16
    w_cls: float = 1.0
    w_reg: float = 1.0
    w_text: float = 1.0
    max_new_tokens: int = 6


@dataclass
class Encoded:
    """Token ids, prompt lengths and cached last-layer inputs of a benchmark's rows (same order as ``bench.rows``)."""

    ids: list[list[int]]
    prompt_len: list[int]
    states: list[torch.Tensor] = field(default_factory=list)


def encode(tokenizer: Any, rows: list[Row]) -> Encoded:
    eos = tokenizer.eos_token_id
    ids, pl = [], []
    for r in rows:
        p = tokenizer(r.prompt, add_special_tokens=False)["input_ids"]
        a = tokenizer(r.answer, add_special_tokens=False)["input_ids"] + [eos]
        ids.append(p + a)
        pl.append(len(p))
    return Encoded(ids, pl)


def encode_and_cache(model: Any, tokenizer: Any, rows: list[Row], progress: Any = None, token: Any = None,
                     disk: bool = True) -> Encoded:
    """Token ids and the cached last-layer inputs of ``rows``; with ``disk`` the states are kept in the user cache
    folder (``catalystbench-states/<sha1 of the ids and the model>.pt``, float32) and reused."""
    import hashlib

    from ...runtime import cache_dir

    enc = encode(tokenizer, rows)
    path = None
    if disk:
        h = hashlib.sha1(repr((enc.ids, type(model).__name__, sum(p.numel() for p in model.parameters()))).encode())
        path = cache_dir() / "catalystbench-states" / f"{h.hexdigest()[:20]}.pt"
        if path.is_file():
            enc.states = list(torch.load(path, weights_only=True))
            return enc
    enc.states = cache_states(model, enc.ids, progress=progress, token=token)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        torch.save(enc.states, tmp)
        tmp.replace(path)
    return enc


@dataclass
class Unit:
    """One trained model: an adapter plus heads (``{task: MLPHead}``) for the tasks it serves."""

    adapter: Adapter
    heads: dict[str, MLPHead]
    tasks: tuple[str, ...]


def _batch(enc: Encoded, idx: list[int], text_rows: list[bool]):
    B = len(idx)
    T = max(len(enc.ids[i]) for i in idx)
    D = enc.states[idx[0]].shape[1]
    H = torch.zeros(B, T, D)
    M = torch.zeros(B, T)
    pos_lists, tgt_lists = [], []
    for j, i in enumerate(idx):
        n, pl = len(enc.ids[i]), enc.prompt_len[i]
        H[j, :n] = enc.states[i]
        M[j, :n] = 1
        if text_rows[j]:
            pos_lists.append(list(range(pl - 1, n - 1)))
            tgt_lists.append(enc.ids[i][pl:n])
        else:
            pos_lists.append([pl - 1])
            tgt_lists.append([])
    P = max(len(p) for p in pos_lists)
    pos = torch.zeros(B, P, dtype=torch.long)
    tgt = torch.full((B, P), -100, dtype=torch.long)
    for j, (p, t) in enumerate(zip(pos_lists, tgt_lists, strict=True)):
        pos[j, : len(p)] = torch.tensor(p)
        pos[j, len(p):] = p[-1]
        if t:
            tgt[j, : len(t)] = torch.tensor(t)
    return H, M, pos, tgt


class Scaler:
    """Per-task standardisation of regression targets (training-row mean and std)."""

    def __init__(self, bench: Bench) -> None:
        self.stats: dict[str, tuple[float, float]] = {}
        for t in bench.tasks:
            if t.kind == "regression":
                y = np.array([r.target for r in bench.select(t.name, "train")])
                self.stats[t.name] = (float(y.mean()), float(y.std() + 1e-8))

    def z(self, task: str, y: float) -> float:
        m, s = self.stats[task]
        return (y - m) / s

    def y(self, task: str, z: float) -> float:
        m, s = self.stats[task]
        return z * s + m


@torch.no_grad()
def input_stats(top: TopLayer, enc: Encoded, rows: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-feature mean and std (+1e-3) of the frozen backbone's final state at the last prompt position of ``rows``."""
    xs = []
    for s in range(0, len(rows), 32):
        idx = rows[s : s + 32]
        H, M, pos, _ = _batch(enc, idx, [False] * len(idx))
        xs.append(top.forward(H, M, pos)[:, 0])
    x = torch.cat(xs)
    return x.mean(0), x.std(0) + 1e-3


def train_unit(top: TopLayer, bench: Bench, enc: Encoded, tasks: tuple[str, ...], heads_on: bool, settings: FitSettings,
               seed: int, scaler: Scaler, progress: Any = None, token: Any = None) -> Unit:
    """Train one adapter (+ heads when ``heads_on``) on the training rows of ``tasks`` (Adam, fixed epochs)."""
    kinds = {t.name: t for t in bench.tasks}
    adapter = top.new_adapter(settings.rank, settings.alpha, seed)
    heads: dict[str, MLPHead] = {}
    if heads_on:
        for k, name in enumerate(tasks):
            t = kinds[name]
            if t.kind == "classification":
                heads[name] = MLPHead(top.d_model, settings.head_hidden, len(t.classes), seed * 100 + k)
            elif t.kind == "regression":
                heads[name] = MLPHead(top.d_model, settings.head_hidden, 1, seed * 100 + k)
    if heads:
        mu, sd = input_stats(top, enc, [i for i, r in enumerate(bench.rows) if r.split == "train" and r.task in heads])
        for h in heads.values():
            h.mu.copy_(mu)
            h.sd.copy_(sd)
    groups = [{"params": list(adapter.parameters()), "lr": settings.lr}]
    if heads:
        groups.append({"params": [p for h in heads.values() for p in h.parameters()], "lr": settings.head_lr})
    opt = torch.optim.Adam(groups)
    rows = [i for i, r in enumerate(bench.rows) if r.split == "train" and r.task in tasks]
    rng = np.random.default_rng(seed)
    n_steps = settings.epochs * math.ceil(len(rows) / settings.batch)
    step = 0
    for _ in range(settings.epochs):
        perm = rng.permutation(len(rows))
        for s in range(0, len(rows), settings.batch):
            if token is not None:
                token.check()
            idx = [rows[k] for k in perm[s : s + settings.batch]]
            rs = [bench.rows[i] for i in idx]
            text = [not (heads_on and r.task in heads) for r in rs]
            H, M, pos, tgt = _batch(enc, idx, text)
            st = top.forward(H, M, pos, adapter)
            loss = torch.zeros(())
            cls_l, reg_l = [], []
            for j, r in enumerate(rs):
                if text[j]:
                    continue
                out = heads[r.task](st[j, 0])
                if kinds[r.task].kind == "classification":
                    cls_l.append(torch.nn.functional.cross_entropy(out.unsqueeze(0), torch.tensor([r.label])))
                else:
                    reg_l.append((out[0] - scaler.z(r.task, r.target)) ** 2)
            if cls_l:
                loss = loss + settings.w_cls * torch.stack(cls_l).mean()
            if reg_l:
                loss = loss + settings.w_reg * torch.stack(reg_l).mean()
            tmask = tgt != -100
            if tmask.any():
                logits = top.logits(st[tmask])
                loss = loss + settings.w_text * torch.nn.functional.cross_entropy(logits, tgt[tmask])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            report(progress, step / n_steps, f"step {step}/{n_steps}")
    adapter.eval()
    for h in heads.values():
        h.eval()
    return Unit(adapter, heads, tasks)


def train_units(top: TopLayer, bench: Bench, enc: Encoded, shared_adapter: bool, heads_on: bool,
                settings: FitSettings, seed: int, progress: Any = None, token: Any = None) -> dict[str, Unit]:
    """``{task: Unit}``: one unit shared by every task (``shared_adapter``) or one unit per task."""
    scaler = Scaler(bench)
    names = tuple(t.name for t in bench.tasks)
    if shared_adapter:
        u = train_unit(top, bench, enc, names, heads_on, settings, seed, scaler, progress, token)
        return {n: u for n in names}
    units = {}
    for k, n in enumerate(names):
        sub = None if progress is None else (lambda f, m, k=k, n=n: report(progress, (k + f) / len(names), f"{n}: {m}"))
        units[n] = train_unit(top, bench, enc, (n,), heads_on, settings, seed * 10 + k, scaler, sub, token)
    return units


def unit_state(units: dict[str, Unit]) -> dict[str, torch.Tensor]:
    """A flat state dict of every distinct unit (``<task or shared>.adapter.*``, ``<...>.head.<task>.*``)."""
    out: dict[str, torch.Tensor] = {}
    seen: dict[int, str] = {}
    for name, u in units.items():
        if id(u) in seen:
            continue
        key = "shared" if len(u.tasks) > 1 else name
        seen[id(u)] = key
        for k, v in u.adapter.state_dict().items():
            out[f"{key}.adapter.{k}"] = v
        for t, h in u.heads.items():
            for k, v in h.state_dict().items():
                out[f"{key}.head.{t}.{k}"] = v
    return out


def load_units(top: TopLayer, bench: Bench, state: dict[str, torch.Tensor], settings: FitSettings) -> dict[str, Unit]:
    """Rebuild ``{task: Unit}`` from :func:`unit_state`'s dict (shared or per task, as its keys say)."""
    names = tuple(t.name for t in bench.tasks)
    kinds = {t.name: t for t in bench.tasks}
    is_shared = any(k.startswith("shared.") for k in state)
    groups = {"shared": names} if is_shared else {n: (n,) for n in names}
    units: dict[str, Unit] = {}
    for key, tasks in groups.items():
        ad = top.new_adapter(settings.rank, settings.alpha, 0)
        ad.load_state_dict({k.split(".adapter.", 1)[1]: v for k, v in state.items() if k.startswith(f"{key}.adapter.")})
        heads = {}
        for t in tasks:
            pre = f"{key}.head.{t}."
            sub = {k[len(pre):]: v for k, v in state.items() if k.startswith(pre)}
            if sub:
                out = len(kinds[t].classes) if kinds[t].kind == "classification" else 1
                h = MLPHead(top.d_model, settings.head_hidden, out, 0)
                h.load_state_dict(sub)
                h.eval()
                heads[t] = h
        u = Unit(ad.eval(), heads, tasks)
        for t in tasks:
            units[t] = u
    return units


@torch.no_grad()
def predict(top: TopLayer, tokenizer: Any, bench: Bench, enc: Encoded, units: dict[str, Unit], row_idx: list[int],
            settings: FitSettings, progress: Any = None) -> list[dict]:
    """Per-row predictions: ``{"row", "task", "pred" (float or class name or text), "correct" (bool or None),
    "parsed" (bool)}``."""
    scaler = Scaler(bench)
    kinds = {t.name: t for t in bench.tasks}
    out: dict[int, dict] = {}
    gen_rows: list[int] = []
    for n_done, i in enumerate(row_idx):
        r = bench.rows[i]
        u = units[r.task]
        t = kinds[r.task]
        if r.task in u.heads:
            H, M, pos, _ = _batch(enc, [i], [False])
            h = u.heads[r.task](top.forward(H, M, pos, u.adapter)[0, 0])
            if t.kind == "classification":
                k = int(h.argmax())
                out[i] = {"pred": t.classes[k], "correct": k == r.label, "parsed": True}
            else:
                out[i] = {"pred": scaler.y(r.task, float(h[0])), "correct": None, "parsed": True}
        elif t.kind == "regression":
            gen_rows.append(i)
        else:
            H, M, pos, tgt = _batch(enc, [i], [True])
            lg = top.logits(top.forward(H, M, pos, u.adapter))[0]
            m = tgt[0] != -100
            ok = bool((lg[m].argmax(-1) == tgt[0][m]).all())
            out[i] = {"pred": r.answer.strip() if ok else tokenizer.decode(lg[m].argmax(-1)).strip(), "correct": ok,
                      "parsed": True}
        report(progress, 0.5 * (n_done + 1) / max(len(row_idx), 1), "scoring")
    # greedy generation for text regression answers, grouped by unit
    for gi, grp in enumerate(_group_by_unit(gen_rows, bench, units).values()):
        u = units[bench.rows[grp[0]].task]
        texts = generate(top, tokenizer, [enc.ids[i][: enc.prompt_len[i]] for i in grp], u.adapter, settings.max_new_tokens)
        for i, txt in zip(grp, texts, strict=True):
            r = bench.rows[i]
            m = NUMBER.search(txt)
            val = float(m.group()) if m else scaler.stats[r.task][0]
            out[i] = {"pred": val, "correct": None, "parsed": bool(m), "text": txt}
        report(progress, 0.5 + 0.5 * (gi + 1) / 6, "generating")
    return [{"row": i, "task": bench.rows[i].task, **out[i]} for i in row_idx]


def _group_by_unit(rows: list[int], bench: Bench, units: dict[str, Unit]) -> dict[int, list[int]]:
    g: dict[int, list[int]] = {}
    for i in rows:
        g.setdefault(id(units[bench.rows[i].task]), []).append(i)
    return g


@torch.no_grad()
def generate(top: TopLayer, tokenizer: Any, prompts: list[list[int]], adapter: Adapter | None, max_new_tokens: int,
             batch: int = 32) -> list[str]:
    """Greedy continuations of token-id prompts with the full model (left padding), the adapter patched in."""
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    texts: list[str] = []
    with top.adapted(adapter):
        for s in range(0, len(prompts), batch):
            chunk = prompts[s : s + batch]
            T = max(len(p) for p in chunk)
            ids = torch.full((len(chunk), T), pad, dtype=torch.long)
            mask = torch.zeros(len(chunk), T, dtype=torch.long)
            for j, p in enumerate(chunk):
                ids[j, T - len(p):] = torch.tensor(p)
                mask[j, T - len(p):] = 1
            gen = top.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=int(max_new_tokens),
                                     do_sample=False, pad_token_id=pad, eos_token_id=tokenizer.eos_token_id)
            texts += [tokenizer.decode(g[T:], skip_special_tokens=True).strip() for g in gen]
    return texts


def r2(y: np.ndarray, p: np.ndarray) -> float:
    sst = float(((y - y.mean()) ** 2).sum())
    return 1.0 - float(((y - p) ** 2).sum()) / sst if sst > 0 else math.nan


def score(bench: Bench, preds: list[dict]) -> dict[str, float]:
    """Per-task metric (R^2, accuracy, exact match) and ``average`` (see :func:`average`)."""
    kinds = {t.name: t for t in bench.tasks}
    by: dict[str, list[dict]] = {}
    for p in preds:
        by.setdefault(p["task"], []).append(p)
    out: dict[str, float] = {}
    for name, ps in by.items():
        t: Task = kinds[name]
        if t.kind == "regression":
            y = np.array([bench.rows[p["row"]].target for p in ps])
            out[name] = r2(y, np.array([float(p["pred"]) for p in ps]))
        else:
            out[name] = float(np.mean([bool(p["correct"]) for p in ps]))
    out["average"] = average(bench, out)
    return out


def average(bench: Bench, per_task: dict[str, float]) -> float:
    """The mean over the tasks present of their scores, each R^2 floored at 0 (a regression worse than predicting
    the mean counts as 0, so one absurd parsed number cannot dominate the average)."""
    kinds = {t.name: t.kind for t in bench.tasks}
    vals = [max(per_task[n], 0.0) if kinds[n] == "regression" else per_task[n] for n in kinds if n in per_task]
    return float(np.mean(vals))


def trainable_parameters(units: dict[str, Unit]) -> int:
    seen, n = set(), 0
    for u in units.values():
        if id(u) in seen:
            continue
        seen.add(id(u))
        n += sum(p.numel() for p in u.adapter.parameters()) + sum(p.numel() for h in u.heads.values() for p in h.parameters())
    return n


def estimate_seconds(bench: Bench, heads_on: bool, settings: FitSettings, s_text_row: float, s_head_row: float,
                     s_gen_row: float) -> float:
    """Cost estimate of one method x seed from measured per-row costs (a text row, a head row, a generated row)."""
    kinds = {t.name: t.kind for t in bench.tasks}
    train = bench.select(split="train")
    test = bench.select(split="test")
    heads = heads_on
    n_head = sum(1 for r in train if heads and kinds[r.task] != "extraction")
    n_text = len(train) - n_head
    n_gen = 0 if heads else sum(1 for r in test if kinds[r.task] == "regression")
    return settings.epochs * (n_text * s_text_row + n_head * s_head_row) + n_gen * s_gen_row + 0.01 * len(test)


def time_probe(top: TopLayer, enc: Encoded, rows: list[int], settings: FitSettings) -> tuple[float, float]:
    """Seconds per training row with the LM head and with a head only (two timed steps of ``settings.batch`` rows)."""
    ad = top.new_adapter(settings.rank, settings.alpha, 0)
    opt = torch.optim.Adam(ad.parameters(), lr=1e-6)
    res = []
    for text in (True, False):
        idx = rows[: settings.batch]
        H, M, pos, tgt = _batch(enc, idx, [text] * len(idx))
        t0 = time.perf_counter()
        st = top.forward(H, M, pos, ad)
        loss = torch.nn.functional.cross_entropy(top.logits(st[tgt != -100]), tgt[tgt != -100]) if text else st.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        res.append((time.perf_counter() - t0) / len(idx))
    return res[0], res[1]


@torch.no_grad()
def infer(top: TopLayer, tokenizer: Any, bench: Bench, items: list[tuple[str, str]], units: dict[str, Unit],
          settings: FitSettings) -> list[dict]:
    """Predictions for new inputs ``[(task, prompt)]`` (no reference answer): a head's value or class where the unit
    has one, else the greedy text answer (a number parsed from it for regression). ``{"task", "pred", "text"}``."""
    scaler = Scaler(bench)
    kinds = {t.name: t for t in bench.tasks}
    ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for _, p in items]
    out: list[dict | None] = [None] * len(items)
    head_idx = [j for j, (t, _) in enumerate(items) if t in units[t].heads]
    if head_idx:
        states = cache_states(top.model, [ids[j] for j in head_idx])
        for j, h in zip(head_idx, states, strict=True):
            task = items[j][0]
            u = units[task]
            st = top.forward(h.unsqueeze(0), torch.ones(1, h.shape[0]), torch.tensor([[h.shape[0] - 1]]), u.adapter)
            y = u.heads[task](st[0, 0])
            if kinds[task].kind == "classification":
                pred: Any = kinds[task].classes[int(y.argmax())]
                text = str(pred)
            else:
                pred = scaler.y(task, float(y[0]))
                text = f"{pred:.{kinds[task].decimals}f}"
            out[j] = {"task": task, "pred": pred, "text": text}
    rest = [j for j in range(len(items)) if out[j] is None]
    groups: dict[int, list[int]] = {}
    for j in rest:
        groups.setdefault(id(units[items[j][0]]), []).append(j)
    for grp in groups.values():
        u = units[items[grp[0]][0]]
        texts = generate(top, tokenizer, [ids[j] for j in grp], u.adapter, settings.max_new_tokens)
        for j, txt in zip(grp, texts, strict=True):
            task = items[j][0]
            pred = txt
            if kinds[task].kind != "classification":
                m = NUMBER.search(txt)
                pred = (float(m.group()) if m else math.nan) if kinds[task].kind == "regression" else (m.group() if m else "")
            out[j] = {"task": task, "pred": pred, "text": txt}
    return [o for o in out if o is not None]
