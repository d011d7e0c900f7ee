"""The pure entry points of the LAION audit: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_audit` ``(AuditConfig, captions=None)`` -> :class:`AuditResult`: the caption audit of an uploaded corpus
  (``captions``: a list of strings or :class:`backend.data.laionaudit.captions.Captions`) or of a generated one
  (``config.source``): identity counts, concept co-occurrence, PMI with intervals, the skew table and the most skewed
  concepts, negative-sentiment and crime-lexicon rates per group, the PMI heatmap's data, the counting rate.
- :func:`run_transfer` ``(TransferConfig)`` -> :class:`TransferResult`: the shipped dual encoders of each planted
  setting evaluated afresh (data bias, model bias, linear fit and R^2 per seed), R^2 along each factor's strengths,
  and the audit of the base corpus's captions.
- :func:`run_association` ``(AssociationConfig, captions=None)`` -> :class:`AssociationResult`: MiniLM's
  gender association of each concept against the concept's data bias in the corpus.

Configs are frozen and check themselves (:class:`backend.errors.InputError`); results are small JSON-able dataclasses.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...errors import InputError
from ...registry import choose
from ...runtime import CancelToken, Progress, checked, report

#: generated corpora an audit can run on instead of an upload (name -> what)
SOURCES: dict[str, str] = {
    "webstyle": "generated web-style captions with planted occupation, crime and sentiment skews",
    "planted": "the captions of the planted base corpus (seed 0) the dual encoders were trained on",
    "planted_shuffled": "the same captions, shuffled against their images (captions alone are unchanged)",
    "upload": "the user's uploaded captions",
}
MAX_GENERATED = 1_000_000


def _round(x: Any, nd: int = 5) -> Any:
    if isinstance(x, float | np.floating):
        return None if not np.isfinite(x) else round(float(x), nd)
    return x


@dataclass(frozen=True)
class AuditConfig:
    """Audit settings: ``source`` (a generated corpus of ``size`` captions, or ``upload``), the concept ``lists``,
    corpus ``ngrams`` (at most ``max_ngrams``), concepts kept when mentioned in at least ``min_count`` captions,
    ``extra`` concepts, the ``top`` most skewed per direction, ``heatmap`` concepts in the PMI heatmap, VADER's
    full rules (``vader_rules``, at most 50,000 captions) instead of the vectorised lexicon."""

    source: str = "webstyle"
    size: int = 20_000
    lists: tuple[str, ...] = ("occupations", "activities", "objects", "settings", "attributes")
    ngrams: bool = True
    max_ngrams: int = 300
    min_count: int = 10
    extra: tuple[str, ...] = ()
    top: int = 10
    heatmap: int = 24
    vader_rules: bool = False

    def __post_init__(self) -> None:
        from .lexicon import CONCEPT_LISTS

        object.__setattr__(self, "source", choose(self.source, tuple(SOURCES), "caption source"))
        if not 100 <= self.size <= MAX_GENERATED:
            raise InputError(f"A generated corpus holds 100-{MAX_GENERATED:,} captions; got {self.size}.")
        lists = tuple(choose(x, tuple(CONCEPT_LISTS), "concept list") for x in self.lists)
        object.__setattr__(self, "lists", lists)
        if not 0 <= self.max_ngrams <= 5000:
            raise InputError(f"max_ngrams must be 0-5,000; got {self.max_ngrams}.")
        if not 1 <= self.min_count <= 100_000:
            raise InputError(f"The minimum count must be 1-100,000; got {self.min_count}.")
        extra = tuple(" ".join(str(e).lower().split()) for e in self.extra if str(e).strip())
        if len(extra) > 200 or any(len(e) > 60 or len(e.split()) > 2 for e in extra):
            raise InputError("Extra concepts: at most 200, each one or two words of at most 60 characters.")
        object.__setattr__(self, "extra", extra)
        if not 1 <= self.top <= 100 or not 2 <= self.heatmap <= 80:
            raise InputError("top must be 1-100 and heatmap 2-80.")
        if not (lists or extra or self.ngrams):
            raise InputError("Choose at least one concept list, corpus n-grams or extra concepts.")


@dataclass
class AuditResult:
    """See :func:`run_audit`."""

    config: dict
    corpus: dict
    groups: dict[str, dict]
    concepts: list[dict]
    top_female: list[str]
    top_male: list[str]
    heatmap: dict
    sentiment: dict
    crime: dict
    costs: dict
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def generated_captions(source: str, size: int) -> list[str]:
    """The captions of a generated source (see :data:`SOURCES`)."""
    from .planted import sample
    from .transfer import corpus_config
    from .webcorpus import generate

    if source == "webstyle":
        return generate(size, seed=0)
    if source in ("planted", "planted_shuffled"):
        from dataclasses import replace

        cfg = replace(corpus_config("shuffled" if source == "planted_shuffled" else "base", 0), images=size)
        return sample(cfg, render_images=False).captions
    raise InputError("The upload source needs a caption file: upload one, or choose a generated source.")


def _texts(config: AuditConfig, captions: Any) -> tuple[list[str], dict]:
    if captions is None:
        texts = generated_captions(config.source, config.size)
        return texts, {"source": config.source, "what": SOURCES[config.source], "captions": len(texts), "rows":
                       len(texts), "empty": 0}
    if hasattr(captions, "texts"):
        return list(captions.texts), captions.summary()
    texts = [str(c) for c in captions if str(c).strip()]
    if not texts:
        raise InputError("No caption text: every caption is empty.")
    return texts, {"source": "list", "captions": len(texts), "rows": len(captions), "empty": len(captions) - len(texts)}


def select_concepts(texts: list[str], config: AuditConfig) -> list[str]:
    """The audit's concepts: the chosen lists, the extra ones and the corpus n-grams (without repeats)."""
    from .audit import discover_ngrams
    from .lexicon import concept_list

    vocab: dict[str, None] = dict.fromkeys(concept_list(config.lists) if config.lists else [])
    vocab.update(dict.fromkeys(config.extra))
    if config.ngrams and config.max_ngrams:
        vocab.update(dict.fromkeys(discover_ngrams(texts, config.min_count, config.max_ngrams)))
    return list(vocab)


def run_audit(config: AuditConfig, captions: Any = None, progress: Progress | None = None,
              token: CancelToken | None = None) -> AuditResult:
    """See the module docstring."""
    from .audit import (
        Counts,
        concept_gender_table,
        identity_matrix,
        negative_flags,
        pmi,
        pmi_ci,
        two_proportion_ci,
        vader_words,
        warm,
        wilson,
    )
    from .lexicon import CRIME, GENDER_GROUPS, IDENTITY, identity_words

    progress = checked(progress, token)
    t0 = time.perf_counter()
    report(progress, 0.0, "Captions")
    texts, corpus = _texts(config, captions)
    if config.vader_rules and len(texts) > 50_000:
        raise InputError(f"VADER's full rules run caption by caption: at most 50,000 captions (this corpus has "
                         f"{len(texts):,}); use the vectorised lexicon.")
    n = len(texts)
    warm()
    t_read = time.perf_counter() - t0
    report(progress, 0.1, "Concepts")
    t1 = time.perf_counter()
    vocab = select_concepts(texts, config)
    report(progress, 0.3, "Counting")
    counts = Counts(texts, vocab, sorted(identity_words()), CRIME, [] if config.vader_rules else vader_words())
    g = identity_matrix(counts)  # [N, K]
    x = counts.matrix(vocab)  # [N, V]
    n_c = np.asarray(x.sum(0)).ravel()
    keep = np.flatnonzero(n_c >= config.min_count)
    x, n_c = x[:, keep], n_c[keep]
    vocab = [vocab[i] for i in keep]
    n_g = g.sum(0)
    co = np.asarray(x.T @ g.astype(np.int64)).T  # [K, V]
    names = list(IDENTITY)
    kf, km = names.index(GENDER_GROUPS[0]), names.index(GENDER_GROUPS[1])
    share, single = concept_gender_table(counts, vocab) if vocab else (np.zeros(0), np.zeros(0, int))
    report(progress, 0.6, "Sentiment and crime terms")
    neg = negative_flags(texts, rules=config.vader_rules, counts=counts)
    crime = counts.any_of(CRIME)
    t_count = time.perf_counter() - t1
    report(progress, 0.85, "Tables")
    p = pmi(co, n_g[:, None], n_c[None, :], n)
    lo, hi = pmi_ci(co, n_g[:, None], n_c[None, :], n)
    nf_single = int((g[:, kf] & ~g[:, km]).sum())
    nm_single = int((g[:, km] & ~g[:, kf]).sum())
    base = nf_single / max(1, nf_single + nm_single)
    s_lo, s_hi = wilson(np.round(share * single), single)
    rows = []
    for j, c in enumerate(vocab):
        rows.append({"concept": c, "captions": int(n_c[j]), "female": int(co[kf, j]), "male": int(co[km, j]),
                     "single_gender": int(single[j]), "female_share": _round(share[j]),
                     "share_low": _round(s_lo[j]), "share_high": _round(s_hi[j]),
                     **{f"pmi_{nm}": _round(p[k, j]) for k, nm in enumerate(names)},
                     "pmi_female_low": _round(lo[kf, j]), "pmi_female_high": _round(hi[kf, j]),
                     "pmi_male_low": _round(lo[km, j]), "pmi_male_high": _round(hi[km, j])})
    ranked = [r for r in rows if r["single_gender"] >= config.min_count and r["female_share"] is not None]
    top_f = [r["concept"] for r in sorted(ranked, key=lambda r: (-(r["female_share"] - base), r["concept"]))
             if r["female_share"] > base][:config.top]
    top_m = [r["concept"] for r in sorted(ranked, key=lambda r: (r["female_share"] - base, r["concept"]))
             if r["female_share"] < base][:config.top]
    hm_idx = np.argsort(-n_c, kind="stable")[:config.heatmap]
    heat = {"groups": names, "concepts": [vocab[j] for j in hm_idx],
            "pmi": [[_round(p[k, j], 4) for j in hm_idx] for k in range(len(names))],
            "counts": [[int(co[k, j]) for j in hm_idx] for k in range(len(names))]}
    groups = {}
    for k, nm in enumerate(names):
        groups[nm] = {"captions": int(n_g[k]), "share": _round(n_g[k] / n)}
    groups["single_female"] = {"captions": nf_single, "share": _round(nf_single / n)}
    groups["single_male"] = {"captions": nm_single, "share": _round(nm_single / n)}
    none = ~g.any(1)
    groups["no_identity_term"] = {"captions": int(none.sum()), "share": _round(none.sum() / n)}

    def rates(flag: np.ndarray) -> dict:
        out = {}
        masks = {nm: g[:, k] for k, nm in enumerate(names)} | {"no_identity_term": none, "all": np.ones(n, bool)}
        for nm, m in masks.items():
            k_, n_ = int((flag & m).sum()), int(m.sum())
            w_lo, w_hi = wilson(np.array([k_]), np.array([n_]))
            out[nm] = {"captions": n_, "flagged": k_, "rate": _round(k_ / n_ if n_ else float("nan")),
                       "low": _round(float(w_lo[0])), "high": _round(float(w_hi[0]))}
        fm = g[:, kf] & ~g[:, km]
        mm = g[:, km] & ~g[:, kf]
        d, d_lo, d_hi = two_proportion_ci(float((flag & mm).sum()), float(mm.sum()), float((flag & fm).sum()),
                                          float(fm.sum()))
        out["male_minus_female"] = {"difference": _round(d), "low": _round(d_lo), "high": _round(d_hi),
                                    "note": "single-gender captions"}
        return out

    total = time.perf_counter() - t0
    report(progress, 1.0, "done")
    return AuditResult(
        config=asdict(config), corpus=corpus, groups=groups, concepts=rows, top_female=top_f, top_male=top_m,
        heatmap=heat, sentiment=rates(neg) | {"method": "VADER rules" if config.vader_rules else "VADER lexicon"},
        crime=rates(crime),
        costs={"captions": n, "concepts": len(vocab), "read_s": round(t_read, 3), "count_s": round(t_count, 3),
               "total_s": round(total, 3), "captions_per_s": round(n / max(t_count, 1e-9), 1)},
        notes=[f"female share among single-gender captions: {base:.3f}"] + list(corpus.get("notes", [])))


# ------------------------------------------------------------------------------------------------------ transfer
@dataclass(frozen=True)
class TransferConfig:
    """Which planted settings to evaluate (all by default; names of
    :data:`backend.data.laionaudit.transfer.SETTINGS`)."""

    settings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        from .transfer import SETTINGS, setting

        names = tuple(setting(s).name for s in self.settings) if self.settings else tuple(SETTINGS)
        object.__setattr__(self, "settings", names)


@dataclass
class TransferResult:
    """Per setting: the fit per seed and R^2 summaries; ``ladders``: R^2 per strength of each factor; ``concepts``
    and ``planted_rate``: the concepts and their planted female rate; ``audit``: the base corpus's audit summary."""

    config: dict
    concepts: list[str]
    planted_rate: list[float]
    settings: dict[str, dict]
    ladders: dict[str, list[dict]]
    audit: dict
    costs: dict

    def to_dict(self) -> dict:
        return asdict(self)


def run_transfer(config: TransferConfig = TransferConfig(), progress: Progress | None = None,
                 token: CancelToken | None = None) -> TransferResult:
    """See the module docstring."""
    from .planted import CONCEPTS, planted
    from .transfer import FACTORS, SETTINGS, evaluate, ladder

    progress = checked(progress, token)
    t0 = time.perf_counter()
    out = {}
    for i, name in enumerate(config.settings):
        report(progress, i / (len(config.settings) + 1), f"Setting {name}")
        out[name] = evaluate(name)
    ladders = {}
    for f in FACTORS:
        steps = [(s, n) for s, n in ladder(f) if n in out]
        if steps:
            ladders[f] = [{"strength": s, "setting": n, "r2_mean": out[n]["r2_mean"], "r2_min": out[n]["r2_min"],
                           "r2_max": out[n]["r2_max"]} for s, n in steps]
    report(progress, len(config.settings) / (len(config.settings) + 1), "Audit of the base captions")
    aud = run_audit(AuditConfig(source="planted", size=SETTINGS["base"].config.images, lists=(), ngrams=False,
                                extra=tuple(CONCEPTS), min_count=1, top=5, heatmap=len(CONCEPTS)))
    audit = {"captions": aud.costs["captions"], "groups": {k: v["captions"] for k, v in aud.groups.items()},
             "top_female": aud.top_female, "top_male": aud.top_male,
             "concepts": [{k: r[k] for k in ("concept", "captions", "female", "male", "female_share", "pmi_female",
                                              "pmi_male")} for r in aud.concepts]}
    report(progress, 1.0, "done")
    return TransferResult(config=asdict(config), concepts=list(CONCEPTS),
                          planted_rate=[round(float(x), 5) for x in planted(0).rate], settings=out, ladders=ladders,
                          audit=audit, costs={"seconds": round(time.perf_counter() - t0, 3),
                                              "parameters_per_encoder": _parameters()})


def _parameters() -> int:
    from .dual import DualEncoder

    return DualEncoder().num_parameters()


# --------------------------------------------------------------------------------------------------- association
@dataclass(frozen=True)
class AssociationConfig:
    """MiniLM against the corpus: the audit settings that choose the concepts (``audit``), concepts with at least
    ``min_single`` single-gender captions, at most ``max_concepts`` of them (the most frequent)."""

    audit: AuditConfig = AuditConfig()
    min_single: int = 20
    max_concepts: int = 80

    def __post_init__(self) -> None:
        if not 1 <= self.min_single <= 100_000 or not 3 <= self.max_concepts <= 300:
            raise InputError("min_single must be 1-100,000 and max_concepts 3-300.")


@dataclass
class AssociationResult:
    """Per concept: its data bias and MiniLM's association; the fit and correlations between them."""

    config: dict
    rows: list[dict]
    fit: dict
    pearson: float | None
    spearman: float | None
    female_terms: list[str]
    male_terms: list[str]
    costs: dict

    def to_dict(self) -> dict:
        return asdict(self)


FEMALE_TERMS = ("woman", "female", "she", "girl", "lady")
MALE_TERMS = ("man", "male", "he", "boy", "gentleman")


def run_association(config: AssociationConfig = AssociationConfig(), captions: Any = None, encoder: Any = None,
                    progress: Progress | None = None, token: CancelToken | None = None) -> AssociationResult:
    """MiniLM's gender association ``a(c) = mean cos(c, female terms) - mean cos(c, male terms)`` (embedded
    all-MiniLM-L6-v2 sentence embeddings of the bare words) against each concept's data bias in the corpus."""
    from scipy import stats

    from .audit import concept_gender_table
    from .dual import linear_fit

    progress = checked(progress, token)
    t0 = time.perf_counter()
    report(progress, 0.0, "Captions")
    texts, _ = _texts(config.audit, captions)
    vocab = select_concepts(texts, config.audit)
    share, single = concept_gender_table(texts, vocab) if vocab else (np.zeros(0), np.zeros(0, int))
    ok = np.flatnonzero(single >= config.min_single)
    ok = ok[np.argsort(-single[ok], kind="stable")][:config.max_concepts]
    if len(ok) < 3:
        raise InputError(f"Only {len(ok)} concepts have at least {config.min_single} single-gender captions; "
                         "MiniLM's association needs 3 or more. Lower the threshold or use a larger corpus.")
    report(progress, 0.4, "MiniLM embeddings")
    if encoder is None:
        from ...models.text import load_text_encoder

        encoder = load_text_encoder()
    words = [vocab[i] for i in ok]
    emb = encoder.embed(words + list(FEMALE_TERMS) + list(MALE_TERMS)).numpy()
    c, f, m = emb[:len(words)], emb[len(words):len(words) + 5], emb[len(words) + 5:]
    assoc = (c @ f.T).mean(1) - (c @ m.T).mean(1)
    db = share[ok]
    fit = linear_fit(db, assoc)
    rows = [{"concept": w, "data_bias": round(float(b), 5), "single_gender": int(single[i]),
             "minilm_association": round(float(a), 5)} for w, b, a, i in zip(words, db, assoc, ok, strict=True)]
    report(progress, 1.0, "done")
    return AssociationResult(asdict(config), rows, {k: round(v, 5) for k, v in fit.items()},
                             _round(float(stats.pearsonr(db, assoc)[0])),
                             _round(float(stats.spearmanr(db, assoc)[0])), list(FEMALE_TERMS), list(MALE_TERMS),
                             {"seconds": round(time.perf_counter() - t0, 3), "concepts": len(words),
                              "encoder_parameters": int(encoder.num_parameters())})
