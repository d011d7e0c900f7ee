"""GLOT: sentence vectors by pooling over a token graph of a frozen language model; the experiments of its page.

Paper: "Towards Improved Sentence Representations using Token Graphs", Mantri, Schönlieb, Lähner, Eliasof. ICLR 2026,
arXiv 2603.03389 (OpenReview stMX9KBhUI). Official code: github.com/ipsitmantri/GLOT (``main.py``,
``diagnostic_stress_test.py``); this is our own dense, pure-torch reimplementation of its algorithm.

The pieces, one module per job:

- :mod:`backend.tokens.glot.layers`: the algorithm (token graph, GAT layers, jumping knowledge, readout) and the
  baseline poolings; :mod:`backend.tokens.glot.pooling`: their registry;
- :mod:`backend.tokens.glot.backbone`: frozen backbones and cached token states;
- :mod:`backend.tokens.glot.heads`: training a pooling + linear head (cross-entropy) on cached states, the shipped heads;
- :mod:`backend.tokens.glot.lora`: the LoRA fine-tuning reference;
- :mod:`backend.tokens.glot.stress`: the stress-test data, the bag-of-words controls, the CSV parser;
- here: the stress-test sweep (:func:`run_stress`), training on the user's labelled texts (:func:`train_on_texts`),
  the per-text view of the page (:func:`example_view`) and the registry of the comparison controls (:data:`CONTROLS`).

Left out: the GCN/GIN/GINE alternatives of the code (the paper's runs use GAT), the STS-B/MTEB heads (no GLUE or
MTEB data offline), multi-head attention and dropout (the released layer is single-head without dropout).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import numpy as np
import torch

from ...errors import InputError
from ...registry import Registry, choose
from ...runtime import Progress, report, sub_progress
from . import stress
from .backbone import Backbone, HiddenStates, encode, load_backbone
from .heads import PooledClassifier, TrainConfig, graph_for, train_head
from .layers import GlotConfig, cosine_matrix, edge_density, masked_max, masked_mean, token_graph
from .lora import lora_reference
from .pooling import POOLING_NAMES, POOLINGS, needs_graph, readouts
from .stress import LabelledTexts, split_indices

# The comparison controls beside the poolings: the bag-of-words classifiers (``obj(train_texts, train_labels,
# eval_texts, eval_labels, seed=0) -> stress.BowResult``), run next to every pooling, and the LoRA fine-tuning reference
# (:func:`backend.tokens.glot.lora.lora_reference`, run by the training script).
CONTROLS: Registry[Any] = Registry("GLOT control")
CONTROLS.add("bow-unigram", partial(stress.bag_of_words, ngrams=1), label="BoW (words)", kind="baseline",
             color="#9467bd", about="logistic regression on word counts (no model)")
CONTROLS.add("bow-1..2gram", partial(stress.bag_of_words, ngrams=2), label="BoW (words + pairs)", kind="baseline",
             color="#8c564b", about="logistic regression on word and adjacent word-pair counts")
CONTROLS.add("lora", lora_reference, label="LoRA fine-tuning", kind="reference", color="#2ca02c",
             about="LoRA r=64 on the backbone + a linear head")
BOW_CONTROLS: tuple[str, ...] = tuple(CONTROLS.names(kind="baseline"))


# ================================================================================================ stress test
@dataclass(frozen=True)
class StressConfig:
    """One stress-test run: ``variant`` (released | hard | relational), distractor ``ratios``, needle ``position``,
    split sizes, poolings, head seeds (the data are fixed by ``data_seed``), and the bag-of-words controls."""

    variant: str = "hard"
    ratios: tuple[float, ...] = (0.9,)
    position: str = "random"
    n_train: int = stress.N_TRAIN
    n_eval: int = stress.N_EVAL
    poolings: tuple[str, ...] = POOLING_NAMES
    seeds: tuple[int, ...] = (0,)
    data_seed: int = 0
    max_tokens: int = 160
    bow: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "variant", choose(self.variant, stress.VARIANTS, "variant"))
        object.__setattr__(self, "position", choose(self.position, stress.POSITIONS, "needle position"))
        if not self.poolings:
            raise InputError(f"Pick at least one pooling: {', '.join(POOLING_NAMES)}.")
        object.__setattr__(self, "poolings", tuple(dict.fromkeys(POOLINGS.key(p) for p in self.poolings)))
        object.__setattr__(self, "ratios", tuple(float(r) for r in self.ratios))
        object.__setattr__(self, "seeds", tuple(int(x) for x in self.seeds))
        if not self.ratios or not self.seeds:
            raise InputError("Pick at least one distractor ratio and one seed.")
        if not 8 <= self.n_train <= 20_000 or not 8 <= self.n_eval <= 20_000:
            raise InputError("Train and eval sizes must be between 8 and 20000 texts.")


@dataclass
class ExampleView:
    """Everything the page draws for one eval text (numpy, small): tokens, needle flags, the graph at tau and its
    density, readout weights of GLOT and AdaPool, and the augmented cosine-similarity matrix (tokens + pooled vectors)."""

    text: str
    label: int
    tokens: list[str]
    needle: list[bool]
    adjacency: np.ndarray
    density: float
    tau: float
    weights: dict[str, list[float]]
    similarity: np.ndarray
    sim_labels: list[str]


@dataclass
class StressResult:
    rows: list[dict[str, Any]]
    bow: list[dict[str, Any]]
    encode_seconds: float
    config: dict[str, Any]
    glot_config: dict[str, Any]
    train_config: dict[str, Any]
    backbone: str
    backbone_params: int
    example: ExampleView | None = None
    models: dict[str, PooledClassifier] = field(default_factory=dict, repr=False)

    def summary(self) -> list[dict[str, Any]]:
        """Mean and std of accuracy over seeds per (ratio, pooling), plus the bag-of-words rows."""
        out = []
        keys = sorted({(r["ratio"], r["pooling"]) for r in self.rows}, key=lambda k: (k[0], POOLING_NAMES.index(k[1])))
        for ratio, pooling in keys:
            rs = [r for r in self.rows if r["ratio"] == ratio and r["pooling"] == pooling]
            acc = np.array([r["accuracy"] for r in rs])
            out.append({"ratio": ratio, "method": pooling, "accuracy": float(acc.mean()),
                        "accuracy_std": float(acc.std()), "seeds": len(rs), "params": rs[0]["params"],
                        "seconds_per_epoch": float(np.mean([r["seconds_per_epoch"] for r in rs])),
                        "edge_density": rs[0].get("edge_density")})
        for b in self.bow:
            out.append({"ratio": b["ratio"], "method": b["name"], "accuracy": b["accuracy"], "accuracy_std": 0.0,
                        "seeds": 1, "params": b["n_features"] + 1, "seconds_per_epoch": b["seconds"],
                        "edge_density": None})
        return out

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in asdict(self).items() if k not in ("models", "example")}
        d["summary"] = self.summary()
        return d


def _needle_tokens(tokenizer: Any, text: str, words: list[int], max_tokens: int) -> tuple[list[str], list[bool]]:
    """Token strings of ``text`` (as the backbone sees it) and, per token, whether it overlaps a needle word."""
    spans, pos = [], 0
    for w in text.split(" "):
        spans.append((pos, pos + len(w)))
        pos += len(w) + 1
    marks = [spans[i] for i in words if i < len(spans)]
    enc = tokenizer(text, truncation=True, max_length=max_tokens, return_offsets_mapping=True)
    toks = tokenizer.convert_ids_to_tokens(enc["input_ids"])
    flags = [any(s < b and a < e for a, b in marks) and e > s for s, e in enc["offset_mapping"]]
    return [str(t) for t in toks], flags


def example_view(backbone: Backbone, states: HiddenStates, index: int, text: str, label: int, needle_words: list[int],
                 models: dict[str, PooledClassifier], tau: float, max_tokens: int = 160) -> ExampleView:
    """The visual summary of eval text ``index``: see :class:`ExampleView`. GLOT's pooled vector in the heatmap is the
    input block of its JK output (``sum_i pi_i h_i``, in token space), so it is comparable with the tokens."""
    h, m = states.batch(torch.tensor([index]))
    n = int(m.sum())
    tokens, needle = _needle_tokens(backbone.tokenizer, text, needle_words, max_tokens)
    tokens, needle = tokens[:n], needle[:n]
    adj = token_graph(h, m, tau)
    weights: dict[str, list[float]] = {}
    pooled: dict[str, torch.Tensor] = {}
    with torch.no_grad():
        for name, model in models.items():
            out = model.pool(h, m)
            if out.weights is not None:
                weights[name] = out.weights[0, :n].tolist()
            pooled[name] = out.z[0, : h.shape[-1]]
    vecs = [h[0, :n]]
    labels = list(tokens)
    cls_vec = h[0, n - 1] if backbone.is_decoder else h[0, 0]
    extra = {"[CLS]" if not backbone.is_decoder else "[LAST]": cls_vec, "[MEAN]": masked_mean(h, m)[0],
             "[MAX]": masked_max(h, m)[0]}
    for name in POOLINGS:
        if name in pooled:
            extra[f"[{name.upper()}]"] = pooled[name]
    for k, v in extra.items():
        vecs.append(v.unsqueeze(0))
        labels.append(k)
    sim = cosine_matrix(torch.cat(vecs, 0).unsqueeze(0))[0].numpy()
    return ExampleView(text=text, label=int(label), tokens=tokens, needle=needle,
                       adjacency=adj[0, :n, :n].numpy().astype(np.uint8), density=float(edge_density(adj, m)[0]),
                       tau=float(tau), weights=weights, similarity=sim.astype(np.float32), sim_labels=labels)


def run_stress(
    cfg: StressConfig | None = None,
    glot: GlotConfig | None = None,
    train_cfg: TrainConfig | None = None,
    backbone: Backbone | str | None = "minilm",
    progress: Progress | None = None,
    keep_models: bool = False,
    example: bool = True,
    states_dir: str | None = None,
) -> StressResult:
    """The stress-test sweep: for each ratio, generate the splits, cache the backbone states once, train every pooling
    for every seed, and run the bag-of-words controls (unigram and unigram + word pairs).

    The models of the last ratio and first seed are kept when ``keep_models`` (and used for the example view).
    """
    cfg = cfg or StressConfig()
    glot = glot or GlotConfig()
    train_cfg = train_cfg or TrainConfig()
    bb = backbone if isinstance(backbone, Backbone) else load_backbone(backbone)
    rows: list[dict[str, Any]] = []
    bow_rows: list[dict[str, Any]] = []
    encode_s = 0.0
    jobs = len(cfg.ratios)
    models: dict[str, PooledClassifier] = {}
    view = None
    for r_i, ratio in enumerate(cfg.ratios):
        base = r_i / jobs
        train_d, eval_d = stress.splits(cfg.variant, ratio, cfg.position, cfg.data_seed, cfg.n_train, cfg.n_eval)
        enc_p = sub_progress(progress, base, base + 0.5 / jobs)
        split = len(train_d) / (len(train_d) + len(eval_d))
        tr = encode(bb, train_d.texts, cfg.max_tokens, progress=sub_progress(enc_p, 0, split), states_dir=states_dir)
        ev = encode(bb, eval_d.texts, cfg.max_tokens, progress=sub_progress(enc_p, split, 1), states_dir=states_dir)
        encode_s += tr.seconds + ev.seconds
        y_tr, y_ev = torch.tensor(train_d.labels), torch.tensor(eval_d.labels)
        graphs = (graph_for(tr, glot.tau), graph_for(ev, glot.tau)) if needs_graph(cfg.poolings) else None
        n_fit = len(cfg.poolings) * len(cfg.seeds)
        k = 0
        for seed in cfg.seeds:
            for pooling in cfg.poolings:
                p = sub_progress(progress, base + (0.5 + 0.5 * k / n_fit) / jobs,
                                 base + (0.5 + 0.5 * (k + 1) / n_fit) / jobs)
                model, res = train_head(pooling, tr, y_tr, ev, y_ev, is_decoder=bb.is_decoder, glot=glot,
                                        cfg=train_cfg, seed=seed, n_classes=2, graphs=graphs, progress=p)
                rows.append({"variant": cfg.variant, "ratio": float(ratio), **res.row(),
                             "epoch_accuracy": res.epoch_accuracy})
                if seed == cfg.seeds[0] and r_i == jobs - 1:
                    models[pooling] = model
                k += 1
        if cfg.bow:
            for name in BOW_CONTROLS:
                b = CONTROLS[name](train_d.texts, train_d.labels, eval_d.texts, eval_d.labels)
                bow_rows.append({"ratio": float(ratio), **asdict(b)})
        if example and r_i == jobs - 1:
            s = eval_d.samples[0]
            view = example_view(bb, ev, 0, s.text, s.label, list(s.needle_words),
                                {k2: models[k2] for k2 in readouts(models)}, glot.tau,
                                cfg.max_tokens)
    report(progress, 1.0, "done")
    return StressResult(rows=rows, bow=bow_rows, encode_seconds=encode_s, config=asdict(cfg), glot_config=asdict(glot),
                        train_config=asdict(train_cfg), backbone=bb.key, backbone_params=bb.num_parameters(),
                        example=view, models=models if keep_models else {})


# ============================================================================================ user CSV training
def train_on_texts(
    data: LabelledTexts,
    poolings: tuple[str, ...] = POOLING_NAMES,
    glot: GlotConfig | None = None,
    train_cfg: TrainConfig | None = None,
    backbone: Backbone | str | None = "minilm",
    seed: int = 0,
    max_tokens: int = 128,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Train every pooling on the user's labelled texts (stratified 75/25 split with ``seed``) plus the bag-of-words
    controls; returns a JSON-able dict with one row per method."""
    glot = glot or GlotConfig()
    train_cfg = train_cfg or TrainConfig()
    bb = backbone if isinstance(backbone, Backbone) else load_backbone(backbone)
    tr_i, ev_i = split_indices(data.labels, 0.25, seed)
    if not ev_i:
        raise InputError("Every class needs at least two rows so that one can be held out for evaluation.")
    texts_tr = [data.texts[i] for i in tr_i]
    texts_ev = [data.texts[i] for i in ev_i]
    y_tr = torch.tensor([data.labels[i] for i in tr_i])
    y_ev = torch.tensor([data.labels[i] for i in ev_i])
    tr = encode(bb, texts_tr, max_tokens, progress=sub_progress(progress, 0, 0.35))
    ev = encode(bb, texts_ev, max_tokens, progress=sub_progress(progress, 0.35, 0.5))
    rows = []
    for k, pooling in enumerate(poolings):
        p = sub_progress(progress, 0.5 + 0.5 * k / len(poolings), 0.5 + 0.5 * (k + 1) / len(poolings))
        _, res = train_head(pooling, tr, y_tr, ev, y_ev, is_decoder=bb.is_decoder, glot=glot, cfg=train_cfg,
                            seed=seed, n_classes=len(data.classes), progress=p)
        rows.append({"method": pooling, **res.row(), "epoch_accuracy": res.epoch_accuracy})
    for name in BOW_CONTROLS:
        b = CONTROLS[name](texts_tr, y_tr.tolist(), texts_ev, y_ev.tolist(), seed=seed)
        rows.append({"method": b.name, "pooling": b.name, "accuracy": b.accuracy, "params": b.n_features + 1,
                     "train_seconds": b.seconds})
    report(progress, 1.0, "done")
    majority = float(np.bincount(y_ev.numpy()).max() / len(y_ev))
    return {"rows": rows, "n_train": len(tr_i), "n_eval": len(ev_i), "classes": data.classes,
            "majority_baseline": majority, "encode_seconds": tr.seconds + ev.seconds, "backbone": bb.key,
            "truncated_texts": tr.truncated + ev.truncated, "glot_config": asdict(glot),
            "train_config": asdict(train_cfg)}


__all__ = ["BOW_CONTROLS", "CONTROLS", "ExampleView", "StressConfig", "StressResult", "example_view", "run_stress",
           "train_on_texts"]
