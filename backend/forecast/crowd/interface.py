"""The registry of crowd simulators (the pysteps ``interface`` pattern): every method behind one factory.

| name              | kind     | method                                                                            |
|-------------------|----------|-----------------------------------------------------------------------------------|
| stddn             | ours     | STDDN's trajectory network trained with the density ODE (Liu et al., ICLR 2026)  |
| micro             | ablation | the same network trained without the density ODE (lambda2 = 0)                   |
| social_force      | baseline | the social-force model, default parameters (Helbing & Molnar 1995, circular)     |
| orca              | baseline | ORCA (van den Berg et al. 2009) through pyrvo, the RVO2 library                   |
| constant_velocity | baseline | every agent keeps its last velocity                                               |

``METHODS[name]`` is a factory ``(net=None) -> CrowdSimulator`` (see ``rollout.CrowdSimulator``); ``get_method(name,
**kw)`` builds a fresh simulator (names case-insensitive, '-' and ' ' read as '_'; an unknown name raises InputError
listing the valid ones). Learned methods load the shipped weights (:mod:`.methods`) unless given a network.

This module imports no torch, so pages can list the methods before any model is loaded; the factories import the
simulators when called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from backend.registry import Registry

if TYPE_CHECKING:
    from .rollout import CrowdSimulator


class LearnedMethod:
    """The factory of a learned simulator: the shipped network of ``kind`` (``methods.weights_path(kind)``), or the
    :class:`~.stddn.MicroNet` given as ``net``."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __call__(self, net: Any = None, **_: Any) -> CrowdSimulator:
        from .methods import Learned, learned
        from .stddn import MicroNet

        return Learned(net, self.kind) if isinstance(net, MicroNet) else learned(self.kind)


def _social_force(**_: Any) -> CrowdSimulator:
    from .methods import SocialForce

    return SocialForce()


def _orca(**_: Any) -> CrowdSimulator:
    from .methods import OrcaSim

    return OrcaSim()


def _constant_velocity(**_: Any) -> CrowdSimulator:
    from .methods import ConstantVelocity

    return ConstantVelocity()


METHODS: Registry[Callable[..., CrowdSimulator]] = Registry("crowd method")
METHODS.add("stddn", LearnedMethod("stddn"), label="STDDN", kind="ours", color="#d62728",
            about="trajectory network trained with the density continuity ODE")
METHODS.add("micro", LearnedMethod("micro"), label="Micro only (no ODE)", kind="ablation", color="#ff7f0e",
            about="same network, lambda2 = 0 (ablation)")
METHODS.add("social_force", _social_force, label="Social force", kind="baseline", color="#1f77b4",
            about="default-parameter social-force model")
METHODS.add("orca", _orca, label="ORCA", kind="baseline", color="#2ca02c",
            about="optimal reciprocal collision avoidance (pyrvo / RVO2)")
METHODS.add("constant_velocity", _constant_velocity, label="Constant velocity", kind="baseline", color="#9467bd",
            about="keeps the last velocity")
LEARNED: tuple[str, ...] = tuple(n for n, m in METHODS.items() if isinstance(m, LearnedMethod))  # they ship weights


def canonical(name: str) -> str:
    """The registered name of ``name`` ('Constant-Velocity' -> 'constant_velocity'); InputError if unknown."""
    return METHODS.key(str(name).strip().replace("-", "_").replace(" ", "_"))


def get_method(name: str, **kwargs: Any) -> CrowdSimulator:
    """A fresh simulator by registry name. ``net=MicroNet`` overrides the learned weights."""
    return METHODS[canonical(name)](**kwargs)


__all__ = ["LEARNED", "METHODS", "LearnedMethod", "canonical", "get_method"]
