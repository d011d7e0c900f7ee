"""Reinforcement learning on finite MDPs: the Spectral Bellman Method, its environments and exploration agents."""
