"""In-context reinforcement learning: a decision-pretrained transformer with a rectified-flow action head (Vintix II / DPT)."""
