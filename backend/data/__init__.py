"""Methods about what training data does to models, one package per method:

- ``backend.data.laionaudit``: the person-centric caption audit of LAION-400M (arXiv 2510.03721): a caption audit
  for uploaded CSV / Parquet corpora (identity lexicon, concept co-occurrence, PMI with intervals, sentiment and
  crime-lexicon associations) and the bias-transfer analysis on a planted corpus of procedural figures with a small
  CLIP-style dual encoder trained here (CLI group ``laionaudit``).
- ``backend.data.catalystbench``: CatalystBench's multi-head full-task fine-tuning (OpenReview tCFYwPdmT4): a mixed
  benchmark built from mendeleev's element records (regression, classification, extraction from sentences) and the
  ST / MST / FT / MFT fine-tuning of SmolLM2-135M with LoRA on its last layer over cached states, beside gradient
  boosting and a regex extractor (CLI group ``catalystbench``).

No module is shared at the family level.
"""
