"""Methods about what training data does to models, one package per method:

- ``backend.data.laionaudit``: the person-centric caption audit of LAION-400M (arXiv 2510.03721): a caption audit
  for uploaded CSV / Parquet corpora (identity lexicon, concept co-occurrence, PMI with intervals, sentiment and
  crime-lexicon associations) and the bias-transfer analysis on a planted corpus of procedural figures with a small
  CLIP-style dual encoder trained here (CLI group ``laionaudit``).

No module is shared at the family level.
"""
