"""``python -m backend laionaudit <action>``: the caption audit and the bias-transfer miniature.

Actions:
  audit        audit a caption file (CSV / Parquet) or a generated corpus: identity counts, PMI with intervals,
               skewed concepts, negative-sentiment and crime-lexicon rates; ``--out`` writes the concept table (CSV,
               formula cells escaped)
  transfer     the shipped dual encoders of every planted setting: data bias, model bias, R^2 per seed and setting
  association  MiniLM's gender association of each concept against its data bias in a corpus

Examples::

    python -m backend laionaudit audit --captions captions.csv --json
    python -m backend laionaudit audit --source webstyle --size 1000000 --json
    python -m backend laionaudit transfer --json
    python -m backend laionaudit association --source webstyle --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``laionaudit`` group to ``python -m backend``."""
    acts = add_group(subparsers, "laionaudit", "LAION audit: caption audit (PMI, skew, sentiment, crime) and bias "
                                               "transfer to a small dual encoder")
    a = add_action(acts, "audit", cmd_audit, "audit a caption file or a generated corpus")
    _corpus_args(a)
    a.add_argument("--lists", default="occupations,activities,objects,settings,attributes",
                   help="comma-separated concept lists (empty for none)")
    a.add_argument("--no-ngrams", action="store_true", help="leave out the corpus's own words and phrases")
    a.add_argument("--max-ngrams", type=int, default=300)
    a.add_argument("--min-count", type=int, default=10, help="keep concepts in at least this many captions")
    a.add_argument("--extra", default="", help="comma-separated extra concepts")
    a.add_argument("--top", type=int, default=10, help="most skewed concepts listed per direction")
    a.add_argument("--vader-rules", action="store_true", help="VADER's full analyser (at most 50,000 captions)")
    a.add_argument("--out", type=Path, default=None, help="write the concept table here (CSV, formulas escaped)")
    t = add_action(acts, "transfer", cmd_transfer, "R^2 of model bias on data bias per planted setting and seed")
    t.add_argument("--settings", default="", help="comma-separated setting names (default: all)")
    s = add_action(acts, "association", cmd_association, "MiniLM's gender association against the corpus")
    _corpus_args(s)
    s.add_argument("--min-single", type=int, default=20, help="concepts with at least this many single-gender "
                                                              "captions")
    s.add_argument("--max-concepts", type=int, default=80)
    return acts


def _corpus_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--captions", type=Path, default=None, help="a CSV or Parquet file of captions")
    p.add_argument("--column", default=None, help="the caption column (default: caption, text, alt_text, ...)")
    p.add_argument("--encoding", default="utf-8", help="the CSV's encoding: utf-8, utf-16, latin-1 or cp1252")
    p.add_argument("--source", default="webstyle", help="generated corpus when no file is given: webstyle, "
                                                        "planted, planted_shuffled")
    p.add_argument("--size", type=int, default=20_000, help="captions of the generated corpus")


def _read(args: argparse.Namespace):  # noqa: ANN202 - Captions or None
    if args.captions is None:
        return None
    from ...io.registry import read_path

    return read_path("captions", args.captions, column=args.column, encoding=args.encoding)


def _split(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in str(text).split(",") if x.strip())


def _audit_config(args: argparse.Namespace, caps: object):  # noqa: ANN202 - AuditConfig
    from .jobs import AuditConfig

    return AuditConfig(source="upload" if caps is not None else args.source, size=args.size,
                       lists=_split(args.lists), ngrams=not args.no_ngrams, max_ngrams=args.max_ngrams,
                       min_count=args.min_count, extra=_split(args.extra), top=args.top, vader_rules=args.vader_rules)


def cmd_audit(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import run_audit

    caps = _read(args)
    cfg = _audit_config(args, caps)
    res = run_audit(cfg, caps)
    out = res.to_dict()
    out["provenance"] = provenance(0, captions=str(args.captions) if args.captions else None, **{
        k: v for k, v in out["config"].items()})
    if args.out is not None:
        import pandas as pd

        from ...io.export import to_csv

        to_csv(pd.DataFrame(res.concepts), args.out)
    g = res.groups
    c = res.costs
    lines = [f"{c['captions']:,} captions, {c['concepts']} concepts, {c['captions_per_s']:,.0f} captions/s counting",
             f"female {g['female']['captions']:,}, male {g['male']['captions']:,}, child {g['child']['captions']:,}, "
             f"elderly {g['elderly']['captions']:,}, no identity term {g['no_identity_term']['captions']:,}",
             "most female-skewed: " + ", ".join(res.top_female),
             "most male-skewed: " + ", ".join(res.top_male),
             f"negative sentiment male - female {res.sentiment['male_minus_female']['difference']}, crime terms "
             f"male - female {res.crime['male_minus_female']['difference']}"]
    if args.out is not None:
        lines.append(f"wrote {args.out}")
    return Output(out, lines=lines)


def cmd_transfer(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import TransferConfig, run_transfer

    res = run_transfer(TransferConfig(settings=_split(args.settings)))
    out = res.to_dict()
    out["provenance"] = provenance(0, settings=list(res.config["settings"]))
    lines = []
    for n, s in res.settings.items():
        per = ", ".join(f"{r['r2']:.3f}" for r in s["seeds"])
        lines.append(f"{n:14} R^2 mean {s['r2_mean']:.3f} (seeds {per})")
    return Output(out, lines=lines)


def cmd_association(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import AssociationConfig, run_association

    caps = _read(args)
    from .jobs import AuditConfig

    cfg = AssociationConfig(audit=AuditConfig(source="upload" if caps is not None else args.source, size=args.size),
                            min_single=args.min_single, max_concepts=args.max_concepts)
    res = run_association(cfg, caps)
    out = res.to_dict()
    out["provenance"] = provenance(0, captions=str(args.captions) if args.captions else None, source=args.source,
                                   size=args.size)
    lines = [f"{len(res.rows)} concepts: MiniLM association vs data bias Pearson {res.pearson}, Spearman "
             f"{res.spearman}, R^2 {res.fit['r2']:.3f}"]
    return Output(out, lines=lines)
