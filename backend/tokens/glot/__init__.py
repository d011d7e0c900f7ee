"""GLOT: sentence vectors by pooling over a token graph of a frozen language model, against the usual poolings, the
bag-of-words controls and LoRA fine-tuning.

Paper: "Towards Improved Sentence Representations using Token Graphs", Mantri, Schönlieb, Lähner, Eliasof. ICLR 2026,
arXiv 2603.03389. Official code: github.com/ipsitmantri/GLOT; this is our own dense, pure-torch reimplementation.

What it implements: the token graph (cosine > tau), K GAT layers, jumping knowledge and the attention readout
(``layers``), the poolings' registry (``pooling``), frozen backbones with cached token states (``backbone``), head
training on cached states and the shipped heads (``heads``), the LoRA reference (``lora``), the released diagnostic
stress test with two harder variants, the bag-of-words controls and the labelled-CSV parser (``stress``), the sweeps
of the page (``experiments``); the page's and the CLI's jobs (``jobs``), the CLI (``cli``), inputs (``inputs``).
Training of the shipped heads: ``python -m backend.train glot``.

What it leaves out: the GCN/GIN/GINE alternatives of the code (the paper's runs use GAT), the GLUE / MTEB heads (no
data offline), multi-head attention and dropout (the released layer is single-head without dropout), the 7B backbones.

Methods (``pooling.POOLINGS`` and ``experiments.CONTROLS``; ``kind`` as in ``backend.registry``):

| name | label | kind | what |
|------|-------|------|------|
| ``glot`` | GLOT | ours | token graph -> K GAT layers -> jumping knowledge -> attention readout |
| ``mean`` | Mean | baseline | masked mean of the token states |
| ``max`` | Max | baseline | channel-wise masked max |
| ``cls`` | CLS / last token | baseline | the first token (encoders) or the last valid token (decoders) |
| ``adapool`` | AdaPool | baseline | attention readout over the tokens, no graph (GLOT with K = 0) |
| ``bow-unigram`` | BoW (words) | baseline | logistic regression on word counts (no model) |
| ``bow-1..2gram`` | BoW (words + pairs) | baseline | logistic regression on word and adjacent word-pair counts |
| ``lora`` | LoRA fine-tuning | reference | LoRA r=64 on the backbone + a linear head |

Jumping knowledge (``layers.JUMPING_KNOWLEDGE``, how GLOT combines the input and its GAT layers):

| name | label | kind | what |
|------|-------|------|------|
| ``cat`` | JK concatenation | ours | the input and every GAT layer side by side (the paper's runs) |
| ``max`` | JK max | ablation | channel-wise max over the GAT layers |
| ``mean`` | JK mean | ablation | mean over the GAT layers |

Shapes: every pooler maps ``hidden [B, L, d]`` and ``mask [B, L]`` to ``z [B, D]`` (and readout weights ``pi [B, L]``
for the attention readouts); a head maps ``z`` to class logits ``[B, C]``.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "GlotConfig": "layers", "GLOT": "layers", "POOLINGS": "pooling", "build_pooler": "pooling",
    "Backbone": "backbone", "load_backbone": "backbone", "encode": "backbone",
    "TrainConfig": "heads", "train_head": "heads", "load_heads": "heads",
    "CONTROLS": "experiments", "StressConfig": "experiments",
    "StressJob": "jobs", "TrainJob": "jobs", "LoraJob": "jobs", "HeadsJob": "jobs",
    "run_stress": "jobs", "run_train": "jobs", "run_lora": "jobs", "run_heads": "jobs",
    "KINDS": "inputs", "PRESETS": "inputs",
})
