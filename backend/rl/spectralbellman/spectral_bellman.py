"""Spectral Bellman Method (SBM): features learned from Bellman backups of a distribution of value functions.

Paper: O. Nabati, B. Dai, S. Mannor, G. Tennenholtz, "Spectral Bellman Method: Unifying Representation and
Exploration in RL", arXiv 2507.13181 (ICLR 2026).

Idea (zero inherent Bellman error): for features ``phi`` closed under the Bellman operator T, every backup of a linear
Q-function stays linear, ``T Q_theta(s,a) = phi(s,a)^T theta~(theta)``. Stacking the backups of ``theta ~ nu`` as
columns gives a matrix ``Y = Phi Theta~^T`` (S*A x n) whose left singular vectors span the features and whose right
ones are the post-Bellman parameters; its spectrum cuts at d.

The published text available here is the abstract and summaries, not the loss equations, so the losses below are
derived as one power-iteration (alternating least-squares) step each, in the form the spec gives:

* ``L1(phi) = E_sa[1/2 phi^T C_theta phi] - E_{sa,theta}[phi^T theta~ * TQ_theta]`` with ``C_theta`` the EMA of the
  post-Bellman parameter covariance ``E[theta~ theta~^T]`` (stop-gradient). Its minimiser is
  ``Phi = Y Theta~ C_theta^{-1} / n``: the feature half of a subspace iteration on ``Y Y^T``.
* ``L2(theta~) = E_theta[1/2 theta~^T C_phi theta~] - E_{sa,theta}[theta~^T phi * TQ_theta]`` with ``C_phi`` the EMA
  of the feature covariance ``E[phi phi^T]`` and ``theta~ = theta + Delta(theta)`` (a residual MLP). Its minimiser is
  the least-squares regression of the backup on the features.
* ``L_orth = ||E_sa[phi phi^T] - I||_F^2`` across feature dimensions (it fixes the scale and the gauge; its gradient
  is ``Phi`` times a d x d matrix, so it never leaves the span).

Each iteration draws ``n`` parameters ``theta ~ nu = N(theta_hat, sigma_rep^2 I)``, backs up ``Q_theta = Phi theta``
exactly through the tabular model (``TQ = R + gamma P max_a Q``), updates both EMAs, then takes SGD steps on L1
(features) and Adam steps on L2 (the residual MLP): iterative EMA/SGD steps, never one SVD. Features are a table
(S*A x d, tabular environments) or a small torch network of the pixel observation (gridworld). Left out: the paper's
multi-step operators and its Atari-scale R2D2 agent; here the backups are expected ones over every state-action pair
(the simulator's model), not replay samples.
The exploration agents (:mod:`backend.rl.agents`) also run the iterations online on a replay buffer's empirical model.
Measured here: table features reach the true span of the rank-8 MDP (1e-10 rad); the pixel network on the gridworld
plateaus at a closure residual of about 0.1 with one direction near pi/2 (Adam on the unpreconditioned L1).

Shapes: ``Phi`` (S*A, d) float64; ``theta``, ``theta~`` (n, d); ``Y`` (S*A, n).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from scipy.linalg import subspace_angles
from torch import nn

from ...errors import InputError
from ...runtime import Progress, report
from .mdps import MDP

DT = torch.float64


@dataclass
class SBMConfig:
    d: int = 8
    iters: int = 300
    n_theta: int = 64  # parameters theta ~ nu per iteration
    sigma_rep: float = 1.0  # nu = N(theta_hat, sigma_rep^2 I)
    ema: float = 0.9  # decay of the two covariance EMAs
    lr_phi: float = 0.5  # feature step, relative to 1 / lambda_max(C_theta) (table) or Adam's rate (network)
    lr_delta: float = 3e-3  # Adam rate of the residual MLP Delta(theta)
    orth: float = 0.1  # weight of the orthogonality penalty
    hidden: int = 64  # width of Delta's MLP and of the feature network
    features: str = "table"  # "table" or "network" (pixel observations)
    record_every: int = 10
    seed: int = 0


@dataclass
class SBMResult:
    phi: np.ndarray  # (S*A, d)
    config: dict
    angles_iter: list[int] = field(default_factory=list)
    max_angle: list[float] = field(default_factory=list)  # largest principal angle to the reference span (rad)
    closure: list[float] = field(default_factory=list)  # ||Y - P_Phi Y|| / ||Y||: Bellman-closure residual
    seconds: float = 0.0
    reference: str = ""

    def summary(self) -> dict:
        return {
            "d": int(self.phi.shape[1]),
            "iters": self.config["iters"],
            "seconds": self.seconds,
            "final_max_angle": self.max_angle[-1] if self.max_angle else None,
            "final_closure": self.closure[-1] if self.closure else None,
            "reference": self.reference,
            "curve": {"iter": self.angles_iter, "max_angle": self.max_angle, "closure": self.closure},
        }


class Residual(nn.Module):
    """theta~ = theta + Delta(theta), Delta a two-layer MLP whose last layer starts at zero."""

    def __init__(self, d: int, hidden: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, hidden, dtype=DT), nn.Tanh(), nn.Linear(hidden, d, dtype=DT))
        nn.init.zeros_(self.net[2].weight)
        nn.init.zeros_(self.net[2].bias)

    def forward(self, theta: torch.Tensor) -> torch.Tensor:
        return theta + self.net(theta)


class FeatureNet(nn.Module):
    """phi(s, .) from a 1 x H x W observation: a small MLP with one d-vector per action."""

    def __init__(self, obs_dim: int, n_actions: int, d: int, hidden: int):
        super().__init__()
        self.a, self.d = n_actions, d
        self.net = nn.Sequential(
            nn.Flatten(),
            nn.Linear(obs_dim, hidden, dtype=DT),
            nn.ReLU(),
            nn.Linear(hidden, hidden, dtype=DT),
            nn.ReLU(),
            nn.Linear(hidden, n_actions * d, dtype=DT),
        )

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs).reshape(-1, self.d)  # (S*A, d), row s*A + a


def max_principal_angle(A: np.ndarray, B: np.ndarray) -> float:
    """Largest principal angle (rad) between the column spans of A and B."""
    return float(np.max(subspace_angles(A, B)))


def reference_span(mdp: MDP, d: int, n: int = 256, seed: int = 0) -> tuple[np.ndarray, str]:
    """The span to compare with: ``phi*`` when known and of rank d, else the top-d left singular vectors of Y."""
    from .mdps import stacked_backups

    if mdp.phi_true is not None and np.linalg.matrix_rank(mdp.phi_true) == d:
        return mdp.phi_true, "true features phi*"
    U, _, _ = np.linalg.svd(stacked_backups(mdp, n, seed), full_matrices=False)
    return U[:, :d], f"top-{d} left singular vectors of the stacked backups"


def backup_torch(gamma: float, Q: torch.Tensor, P: torch.Tensor, R: torch.Tensor, term: torch.Tensor) -> torch.Tensor:
    """(S*A, n) Q values -> (S*A, n) backups ``R + gamma P max_a Q`` through the (S, A, S) model ``P``."""
    S, A = R.shape
    V = Q.reshape(S, A, -1).amax(dim=1).masked_fill(term[:, None], 0.0)
    Y = R[:, :, None] + gamma * torch.einsum("sat,tn->san", P, V)
    return Y.masked_fill(term[:, None, None], 0.0).reshape(S * A, -1)


class SBMLearner:
    """The SBM state: features (table or network), the residual MLP, both covariance EMAs and the optimisers.

    :meth:`step` runs iterations against a model ``(P, R)`` (the simulator's, or the empirical one of a replay
    buffer) over the rows ``mask`` (state-action pairs with data); unmasked rows keep their features.
    """

    def __init__(
        self,
        n_states: int,
        n_actions: int,
        cfg: SBMConfig,
        obs: np.ndarray | None = None,
        terminal: np.ndarray | None = None,
    ):
        self.cfg, self.S, self.A = cfg, n_states, n_actions
        d = cfg.d
        self.gen = torch.Generator().manual_seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        term = np.zeros(n_states, bool) if terminal is None else terminal
        self.term = torch.as_tensor(term)
        self.rows_term = self.term.repeat_interleave(n_actions)
        if cfg.features == "network":
            if obs is None:
                raise InputError("Network features need pixel observations; use the gridworld or table features.")
            self.obs = torch.as_tensor(obs, dtype=DT)
            self.net = FeatureNet(int(np.prod(obs.shape[1:])), n_actions, d, cfg.hidden)
            self.opt_phi = torch.optim.Adam(self.net.parameters(), lr=cfg.lr_phi * 1e-2)
        else:
            self.table = nn.Parameter(torch.randn(n_states * n_actions, d, generator=self.gen, dtype=DT))
            with torch.no_grad():
                self.table[self.rows_term] = 0.0
            self.opt_phi = torch.optim.SGD([self.table], lr=cfg.lr_phi)
        self.delta = Residual(d, cfg.hidden)
        self.opt_delta = torch.optim.Adam(self.delta.parameters(), lr=cfg.lr_delta)
        self.C_theta = torch.eye(d, dtype=DT) * cfg.sigma_rep**2
        self.C_phi = torch.eye(d, dtype=DT)
        self.eye = torch.eye(d, dtype=DT)
        self.iterations = 0

    def features(self) -> torch.Tensor:
        if self.cfg.features == "network":
            return self.net(self.obs).masked_fill(self.rows_term[:, None], 0.0)
        return self.table

    def phi(self) -> np.ndarray:
        with torch.no_grad():
            return self.features().detach().numpy().copy()

    def sample_theta(self, theta_hat: torch.Tensor | None) -> torch.Tensor:
        mean = torch.zeros(self.cfg.d, dtype=DT) if theta_hat is None else theta_hat
        return mean + self.cfg.sigma_rep * torch.randn(self.cfg.n_theta, self.cfg.d, generator=self.gen, dtype=DT)

    def targets(self, gamma: float, P: torch.Tensor, R: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return backup_torch(gamma, self.features().detach() @ theta.T, P, R, self.term)

    def step(
        self,
        gamma: float,
        P: np.ndarray,
        R: np.ndarray,
        mask: np.ndarray | None = None,
        iters: int = 1,
        theta_hat: np.ndarray | None = None,
        callback: Callable[[int, torch.Tensor, torch.Tensor], None] | None = None,
    ) -> None:
        """``iters`` SBM iterations: draw theta ~ nu, back up, update the EMAs, SGD on L1 + L_orth, Adam on L2."""
        cfg = self.cfg
        Pt, Rt = torch.as_tensor(P, dtype=DT), torch.as_tensor(R, dtype=DT)
        rows = ~self.rows_term if mask is None else torch.as_tensor(mask) & ~self.rows_term
        live = max(int(rows.sum()), 1)
        w = rows.to(DT)[:, None]
        th_hat = None if theta_hat is None else torch.as_tensor(theta_hat, dtype=DT)
        for _ in range(iters):
            Phi = self.features()
            theta = self.sample_theta(th_hat)
            Y = self.targets(gamma, Pt, Rt, theta) * w  # (S*A, n) targets, stop-gradient
            with torch.no_grad():
                tt = self.delta(theta)
                self.C_theta = cfg.ema * self.C_theta + (1 - cfg.ema) * (tt.T @ tt) / cfg.n_theta
                Pd = Phi.detach() * w
                self.C_phi = cfg.ema * self.C_phi + (1 - cfg.ema) * (Pd.T @ Pd) / live
            if callback is not None and self.iterations % cfg.record_every == 0:
                callback(self.iterations, Phi.detach(), Y)
            # L1 + L_orth: features against the EMA of the post-Bellman parameter covariance.
            Pw = Phi * w
            G = Pw.T @ Pw / live
            l1 = (0.5 * ((Pw @ self.C_theta) * Pw).sum(1) - ((Pw @ tt.T) * Y).mean(1)).sum() / live
            l_orth = cfg.orth * ((G - self.eye) ** 2).sum()
            self.opt_phi.zero_grad()
            if cfg.features == "table":
                # The L1 gradient preconditioned by C_theta^{-1}: a unit step is exactly the power-iteration (ALS)
                # update Phi <- Y Theta~ C_theta^{-1} / n; lr_phi < 1 damps it. The penalty's gradient as it is.
                (g1,) = torch.autograd.grad(l1, self.table, retain_graph=True)
                (go,) = torch.autograd.grad(l_orth, self.table)
                with torch.no_grad():
                    C = self.C_theta + 1e-12 * torch.trace(self.C_theta) / cfg.d * self.eye
                    # the penalty's gradient Phi (G - I), its directions with g > 5 scaled by 5/g (a bounded step,
                    # the same fixed point G = I)
                    g, V = torch.linalg.eigh(G.detach())
                    clip = (V * torch.clamp(5.0 / g.clamp_min(1e-300), max=1.0)) @ V.T
                    self.table.grad = live * (g1 @ torch.linalg.inv(C) + go @ clip)
            else:
                (l1 + l_orth).backward()
            self.opt_phi.step()
            if cfg.features == "table" and not bool(torch.isfinite(self.table).all()):
                raise FloatingPointError("SBM features diverged")
            # L2: theta~ = theta + Delta(theta) against the EMA of the feature covariance.
            with torch.no_grad():
                b = (Y.T @ (self.features().detach() * w)) / live  # (n, d): E_sa[phi * TQ_theta]
            tt = self.delta(theta)
            l2 = (0.5 * ((tt @ self.C_phi) * tt).sum(1) - (tt * b).sum(1)).mean()
            self.opt_delta.zero_grad()
            l2.backward()
            self.opt_delta.step()
            self.iterations += 1


def learn_features(
    mdp: MDP, cfg: SBMConfig | None = None, theta_hat: np.ndarray | None = None, progress: Progress | None = None
) -> SBMResult:
    """Run the SBM iterations on the simulator's backups of ``mdp``; returns the features and the angle curve."""
    cfg = cfg or SBMConfig()
    S, A = mdp.n_states, mdp.n_actions
    if not 1 <= cfg.d <= S * A:
        raise InputError(f"Feature dimension d = {cfg.d} is out of range; choose 1..{S * A} (states x actions).")
    if cfg.iters < 1 or cfg.iters > 20000:
        raise InputError("SBM iterations must be in 1..20,000.")
    t0 = time.perf_counter()
    learner = SBMLearner(S, A, cfg, mdp.obs, mdp.terminal)
    ref, ref_name = reference_span(mdp, cfg.d)
    out = SBMResult(np.zeros((S * A, cfg.d)), asdict(cfg), reference=ref_name)

    def record(it: int, Phi: torch.Tensor, Y: torch.Tensor) -> None:
        F = Phi.numpy()
        out.angles_iter.append(it)
        out.max_angle.append(max_principal_angle(F, ref))
        Q, _ = np.linalg.qr(F)
        Yn = Y.numpy()
        out.closure.append(float(np.linalg.norm(Yn - Q @ (Q.T @ Yn)) / max(np.linalg.norm(Yn), 1e-300)))

    chunk = 25
    for start in range(0, cfg.iters, chunk):
        learner.step(mdp.gamma, mdp.P, mdp.R, iters=min(chunk, cfg.iters - start), theta_hat=theta_hat, callback=record)
        report(progress, min(start + chunk, cfg.iters) / cfg.iters, f"SBM iteration {start + chunk}/{cfg.iters}")
    Phi = learner.features().detach()
    theta = learner.sample_theta(None if theta_hat is None else torch.as_tensor(theta_hat, dtype=DT))
    record(
        cfg.iters,
        Phi,
        learner.targets(mdp.gamma, torch.as_tensor(mdp.P, dtype=DT), torch.as_tensor(mdp.R, dtype=DT), theta),
    )
    out.phi = learner.phi()
    out.seconds = time.perf_counter() - t0
    return out


def capture(mdp: MDP, phi: np.ndarray, n: int = 512, seed: int = 999) -> dict:
    """How well span(phi) captures held-out Bellman backups: ``n`` random Q tables (N(0, 1) entries, generator
    ``seed``, independent of the learner's draws) are backed up through the simulator, ``Y`` (S*A, n); ``residual`` is
    ``||Y - P_phi Y|| / ||Y||`` and ``optimum`` the same for the best d-dimensional subspace (Eckart-Young: the tail
    singular values of ``Y``), so ``ratio = residual / optimum >= 1`` and 1 is the best any d features can do. The
    measure does not need the top-d subspace to be well separated (a flat spectrum makes the principal angle to it
    meaningless, not this ratio)."""
    from .mdps import stacked_backups

    Y = stacked_backups(mdp, n, seed)
    d = phi.shape[1]
    Q, _ = np.linalg.qr(phi)
    norm = float(np.linalg.norm(Y))
    residual = float(np.linalg.norm(Y - Q @ (Q.T @ Y))) / norm
    s = np.linalg.svd(Y, compute_uv=False)
    optimum = float(np.sqrt(np.sum(s[d:] ** 2))) / norm
    return {"residual": residual, "optimum": optimum, "ratio": residual / max(optimum, 1e-300), "d": int(d)}


def backup_rank(mdp: MDP, tol: float = 1e-10, n: int = 256, seed: int = 0) -> int:
    """Numerical rank of the stacked backups (singular values above ``tol`` x the largest)."""
    from .mdps import spectrum

    s = spectrum(mdp, n, seed)
    return int((s > tol * s[0]).sum())
