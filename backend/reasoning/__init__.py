"""Shared pieces for reasoning-decoder pages: a generator of multi-step arithmetic and word problems with exact
answers and step-by-step solutions (:mod:`backend.reasoning.tasks`), with per-model thinking markers."""
