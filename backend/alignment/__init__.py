"""Inference-time alignment methods. ``softbon``: Soft Best-of-N (exact policy, KL bound, regret terms)."""
