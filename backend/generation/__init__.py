"""Generation from sequence models. ``futurefill``: exact fast decoding for convolutional sequence models (FutureFill,
ICLR 2026): naive / epoched / continuous / prompted online convolution, a small spectral-filter model, the cost model.
CLI group ``futurefill`` (``backend.generation.cli``)."""
