"""LAION audit: a person-centric caption audit and the transfer of data bias to a model.

Paper: Girrbach, Alaniz, Smith, Darrell, Akata, "Person-Centric Annotations of LAION-400M: Auditing Bias and Its
Transfer to Models" (ICLR 2026; arXiv 2510.03721). The paper labels the 276M people of LAION-400M (YOLO11 boxes,
SigLIP classifiers for perceived gender and race trained on a consensus of three multimodal LLMs, per-person
captions), audits identity-concept associations (PMI over SAE topics, negative sentiment, crime) and shows that a
linear fit of a concept's gender co-occurrence in the data explains 60-70 % of CLIP's and Stable Diffusion's gender
bias for it (R^2 0.57-0.71 for CLIP, 0.63-0.64 for SD).

Implemented: the caption audit for an uploaded CSV / Parquet corpus (``captions`` reads it, ``lexicon`` holds the
identity, concept, crime and stop-word lists, ``audit`` counts with sparse matrices: co-occurrence, PMI with
delta-method intervals, the female share of single-gender captions with Wilson intervals, VADER-lexicon negative
sentiment and crime-lexicon rates per group); the bias-transfer miniature (``planted``: procedural figures and
captions with planted concept-gender rates, attribute noise, age confounding and reporting amplification; ``dual``:
a small CLIP-style dual encoder trained here, ``python -m backend.train laionaudit``; ``transfer``: the settings,
the data-bias measures, model bias d(c) and the linear fit); MiniLM's gender association of concepts against their
co-occurrence in a corpus (``jobs.run_association``); a generated web-style corpus (``webcorpus``). Left out: the
image-side annotation pipeline (no LAION, no detector or classifier offline: identities come from caption words
only), SAE topics (concepts are word lists and corpus n-grams), race/ethnicity (no caption lexicon can stand for
perceived race), Stable Diffusion.

| name | label | kind | what |
|------|-------|------|------|
| ``single_gender_share`` | female share (paper) | ours | female share among single-gender captions mentioning the concept |
| ``log_odds`` | log odds female : male | baseline | log((nf + 0.5) / (nm + 0.5)) of the same counts |
| ``pmi_with_female`` | PMI(female, concept) | baseline | the audit's PMI over all captions |

(``transfer.MEASURES``: the data-bias measures the model bias is fitted on.) Shapes: caption x term matrices
``[N, V]`` (scipy CSR), identity indicators ``[N, K]``, co-occurrence and PMI ``[K, V]``; images uint8
``[N, 24, 24, 3]``; model bias and data bias ``[C]`` over the 30 planted concepts.
``run_audit(AuditConfig, captions) -> AuditResult``; ``run_transfer(TransferConfig) -> TransferResult``;
``run_association(AssociationConfig, captions) -> AssociationResult``.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "Captions": "captions", "read_captions": "captions",
    "IDENTITY": "lexicon", "CONCEPT_LISTS": "lexicon", "CRIME": "lexicon",
    "Counts": "audit", "pmi": "audit", "pmi_ci": "audit", "wilson": "audit", "concept_gender_table": "audit",
    "PlantedConfig": "planted", "sample": "planted", "evaluation_set": "planted", "CONCEPTS": "planted",
    "DualConfig": "dual", "DualEncoder": "dual", "train": "dual", "model_bias": "dual", "linear_fit": "dual",
    "SETTINGS": "transfer", "MEASURES": "transfer", "evaluate": "transfer",
    "AuditConfig": "jobs", "AuditResult": "jobs", "run_audit": "jobs", "TransferConfig": "jobs",
    "TransferResult": "jobs", "run_transfer": "jobs", "AssociationConfig": "jobs", "AssociationResult": "jobs",
    "run_association": "jobs",
})
