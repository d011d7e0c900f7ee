"""Generation from sequence models, one package per method:

- ``backend.generation.futurefill``: FutureFill (arXiv 2410.03766): exact fast decoding for convolutional sequence
  models: naive / epoched / continuous / prompted online convolution, a small spectral-filter model, the cost model
  (CLI group ``futurefill``).

Nothing is shared between methods yet.
"""
