"""In-context reinforcement learning, one package per method:

- ``backend.icrl.vintix``: Vintix II / DPT (ICLR 2026), a decision-pretrained transformer with a rectified-flow
  action head on procedural bandits and a dark room, against UCB1 and Thompson sampling (CLI group ``vintix``).

No module is shared at the family level.
"""
