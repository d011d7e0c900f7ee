"""Search over modelling frameworks and models: the facility-location problem (:mod:`.facility`), Pareto tools (:mod:`.pareto`) and MATHMO (:mod:`.mathmo`)."""
