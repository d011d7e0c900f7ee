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

- :mod:`backend.reasoning.domain`: what the tiny reasoner's grammar covers, and the in/out-of-domain label of a
  question;
- :mod:`backend.reasoning.reasoner_eval`: greedy, pass@k and maj@k of a causal LM per split and difficulty.

Method packages (each uses ``tasks`` and, where it decodes, ``lm`` and ``sampling``):
:mod:`backend.reasoning.swireasoning` (latent/explicit switching decoding and its baselines),
:mod:`backend.reasoning.d2f` (discrete diffusion forcing: block-causal diffusion decoding with a KV cache),
:mod:`backend.reasoning.t1` (tool-integrated verification for best-of-N),
:mod:`backend.reasoning.depo` (DEPO's offline data selection and online explorability pruning for GRPO, trained with
``grpo``),
:mod:`backend.reasoning.bridge` (interdependent parallel samples through cross-sample attention, trained with
``grpo``),
:mod:`backend.reasoning.rgm` (the reflective generative model's self-supervised process reward model),
:mod:`backend.reasoning.orprm` (OR-PRM's data gates and step-level reward model over operations-research
formulations; it uses ``candidates`` and no language model).
"""
