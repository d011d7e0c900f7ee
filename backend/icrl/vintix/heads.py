"""Continuous action heads of the decision-pretrained transformer (``dpt.py``) and their :data:`HEADS` registry.

Every head maps the transformer's hidden state ``h`` (N, d) at the query token to a distribution over a 1-D action:

* ``flow`` (ours, Vintix II): a rectified flow. Velocity net ``v_eta(h, x_t, phi(x_t), gamma(t))`` trained with
  ``||v_eta - (a* - x_0)||^2`` where ``x_t = (1 - t) x_0 + t a*``, ``x_0 ~ N(0, 1)``, ``t ~ U[0, 1]``; ``gamma`` are
  sinusoidal time features with learned frequencies, ``phi`` fixed Fourier features of ``x_t``; the loss averages ``draws`` (x_0, t) pairs per target; sampling integrates ``dx/dt = v`` from ``x_0 ~ N(0, 1)`` with
  Heun's method in ``M`` steps.
* ``gaussian`` (baseline): a mean and a log standard deviation, trained by the Gaussian negative log-likelihood.
* ``mixture`` (baseline): a mixture of ``C`` Gaussians (logits, means, log standard deviations), trained by its
  negative log-likelihood.

Interface: ``loss(h (N, d), a (N,)) -> scalar`` and ``sample(h (N, d), n, generator) -> (N, n)``.

| name | label | kind | citation |
|------|-------|------|----------|
| flow | Rectified-flow head (ours) | ours | Vintix II (dunnolab), rectified flow of Liu et al. 2022 |
| gaussian | Gaussian head | baseline | a unimodal Gaussian policy head |
| mixture | Gaussian-mixture head | baseline | a mixture-density network head (Bishop 1994) |
"""

from __future__ import annotations

import math

import torch
from torch import nn

from backend.registry import Registry

LOG_STD = (-5.0, 1.0)


class FlowHead(nn.Module):
    """Velocity net ``v(h, x_t, t)``: an MLP over ``[W_h h, x_t, phi(x_t), gamma(t)]``.

    ``phi(x) = (sin(k pi x / 2), cos(k pi x / 2))`` for ``k = 1..x_freq`` are fixed Fourier features of the noisy action:
    near ``t = 1`` the velocity of a two-peaked target changes sign between peaks only ``2 * width`` apart, a sharp
    function of ``x`` that a plain GELU MLP on the scalar ``x`` fits slowly. ``W_h`` projects the trunk state to the
    hidden width so that neither input dominates the first layer. ``layers`` hidden layers of width ``hidden``.
    """

    # the keyword options ``make_head`` passes on
    OPTIONS: tuple[str, ...] = ("hidden", "n_freq", "steps", "draws", "x_freq", "layers")

    def __init__(
        self,
        d: int,
        hidden: int = 256,
        n_freq: int = 16,
        steps: int = 16,
        draws: int = 8,
        x_freq: int = 8,
        layers: int = 3,
    ):
        super().__init__()
        self.steps = steps
        self.draws = draws  # (x_0, t) pairs per target in the loss: the head is cheap next to the trunk
        self.freq = nn.Parameter(torch.randn(n_freq) * 4.0)  # learned frequencies of gamma(t)
        self.register_buffer("xk", torch.arange(1, x_freq + 1, dtype=torch.float32) * (math.pi / 2), persistent=False)
        self.h_proj = nn.Linear(d, hidden)
        mods: list[nn.Module] = [nn.Linear(hidden + 1 + 2 * x_freq + 2 * n_freq, hidden), nn.GELU()]
        for _ in range(layers - 1):
            mods += [nn.Linear(hidden, hidden), nn.GELU()]
        self.net = nn.Sequential(*mods, nn.Linear(hidden, 1))

    def gamma(self, t: torch.Tensor) -> torch.Tensor:
        ang = 2 * math.pi * t[..., None] * self.freq
        return torch.cat([torch.sin(ang), torch.cos(ang)], -1)

    def phi(self, x: torch.Tensor) -> torch.Tensor:
        ang = x[..., None] * self.xk
        return torch.cat([torch.sin(ang), torch.cos(ang)], -1)

    def velocity(self, h: torch.Tensor, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([self.h_proj(h), x[..., None], self.phi(x), self.gamma(t)], -1)).squeeze(-1)

    def loss(self, h: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        hh = h[:, None, :].expand(-1, self.draws, -1)
        aa = a[:, None].expand(-1, self.draws)
        x0 = torch.randn_like(aa)
        t = torch.rand_like(aa)
        xt = (1 - t) * x0 + t * aa
        return ((self.velocity(hh, xt, t) - (aa - x0)) ** 2).mean()

    @torch.no_grad()
    def sample(
        self, h: torch.Tensor, n: int, generator: torch.Generator | None = None, steps: int | None = None
    ) -> torch.Tensor:
        m = steps or self.steps
        hh = h[:, None, :].expand(-1, n, -1)
        x = torch.randn(h.shape[0], n, generator=generator)
        dt = 1.0 / m
        for i in range(m):
            t = torch.full_like(x, i * dt)
            v1 = self.velocity(hh, x, t)
            x_e = x + dt * v1
            v2 = self.velocity(hh, x_e, t + dt)
            x = x + 0.5 * dt * (v1 + v2)
        return x


class GaussianHead(nn.Module):
    OPTIONS: tuple[str, ...] = ("hidden",)  # the keyword options ``make_head`` passes on

    def __init__(self, d: int, hidden: int = 128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, 2))

    def params(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.net(h)
        return out[..., 0], out[..., 1].clamp(*LOG_STD)

    def loss(self, h: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        mu, ls = self.params(h)
        return (ls + 0.5 * ((a - mu) / ls.exp()) ** 2).mean() + 0.5 * math.log(2 * math.pi)

    @torch.no_grad()
    def sample(self, h: torch.Tensor, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
        mu, ls = self.params(h)
        return mu[:, None] + ls.exp()[:, None] * torch.randn(h.shape[0], n, generator=generator)


class MixtureHead(nn.Module):
    OPTIONS: tuple[str, ...] = ("hidden", "components")  # the keyword options ``make_head`` passes on

    def __init__(self, d: int, hidden: int = 128, components: int = 5):
        super().__init__()
        self.c = components
        self.net = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, 3 * components))

    def params(self, h: torch.Tensor):
        logit, mu, ls = self.net(h).split(self.c, -1)
        return logit.log_softmax(-1), mu, ls.clamp(*LOG_STD)

    def loss(self, h: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        logw, mu, ls = self.params(h)
        z = (a[..., None] - mu) / ls.exp()
        comp = logw - ls - 0.5 * z**2 - 0.5 * math.log(2 * math.pi)
        return -torch.logsumexp(comp, -1).mean()

    @torch.no_grad()
    def sample(self, h: torch.Tensor, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
        logw, mu, ls = self.params(h)
        idx = torch.multinomial(logw.exp(), n, replacement=True, generator=generator)  # (N, n)
        m, s = mu.gather(1, idx), ls.exp().gather(1, idx)
        return m + s * torch.randn(m.shape, generator=generator)


HEADS: Registry[type[nn.Module]] = Registry("action head")
HEADS.add(
    "flow",
    FlowHead,
    label="Rectified-flow head (ours)",
    kind="ours",
    about="rectified flow, learned-frequency time features, Heun sampling",
)
HEADS.add("gaussian", GaussianHead, label="Gaussian head", kind="baseline", about="one Gaussian, NLL")
HEADS.add("mixture", MixtureHead, label="Gaussian-mixture head", kind="baseline", about="5 Gaussians, NLL")
get_head = HEADS.get


def make_head(name: str, d: int, **kw) -> nn.Module:
    """The head ``name`` of :data:`HEADS` on a trunk of width ``d``; of ``kw`` it takes the options it has
    (``OPTIONS`` of its class; ``None`` values leave the class defaults)."""
    cls = get_head(name)
    return cls(d, **{k: v for k, v in kw.items() if k in cls.OPTIONS and v is not None})
