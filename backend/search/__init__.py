"""Search over modelling frameworks and models.

Method packages: :mod:`.mathmo` (MATHMO: Pareto-UCB over facility-location frameworks, its problem and Pareto tools).
The family shares no module.
"""
