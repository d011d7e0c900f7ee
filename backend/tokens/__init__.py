"""Token-level methods over frozen models, one package per method:

- ``glot``: GLOT token-graph pooling of a frozen LM's token states (arXiv 2603.03389);
- ``illava``: iLLaVA token merging in a tiny vision-language model (arXiv 2412.06263);
- ``tactic``: Tactic sparse decode attention by target attention mass (arXiv 2502.12216).

The three share no module: each package holds its own model pieces, jobs, CLI and inputs.
"""
