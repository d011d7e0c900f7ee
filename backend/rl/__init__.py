"""Reinforcement learning on finite MDPs.

Method packages: ``spectralbellman`` (the Spectral Bellman Method: its environments, the SBM learner and the
exploration agents). The family shares nothing beyond its packages.
"""
