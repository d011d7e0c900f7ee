"""Physics-constrained generative models: PDE data and residuals (:mod:`.pdes`), physics-based flow matching (:mod:`.pbfm`)."""
