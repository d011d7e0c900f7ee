"""Shared pieces for reasoning pages:

- :mod:`backend.reasoning.tasks`: a generator of multi-step arithmetic and word problems with exact answers and
  step-by-step solutions, with per-model thinking markers;
- :mod:`backend.reasoning.lm`: one interface to the causal LMs the reasoning decoders use (prompt format, markers);
- :mod:`backend.reasoning.sampling`: the sampling engine of every causal LM of the lab (N samples per prompt in one
  batch with a KV cache; temperature, top-p, top-k, stop strings; per-token log-probabilities, entropies and hidden
  states; greedy is temperature 0);
- :mod:`backend.reasoning.grpo`: GRPO's group-normalised advantages, clipped ratio, k3 KL and one optimiser step;
- :mod:`backend.reasoning.candidates`: a cache of N sampled candidates per problem, verifier scores over it and exact
  BoN@n / weighted-BoN@n curves.

Method packages: :mod:`backend.reasoning.swireasoning` (SwiReasoning's latent/explicit switching decoder and its
baselines; it uses ``tasks`` and ``lm``).
"""
