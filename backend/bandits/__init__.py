"""Assortment bandits: the diversified MNL model (:mod:`.dmnl`), its learners (:mod:`.agents`), catalogues (:mod:`.items`)."""
