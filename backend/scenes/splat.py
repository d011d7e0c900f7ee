"""Differentiable 3-D Gaussian splatting in torch on the CPU (a shared module: the 3-D pages render Gaussians here).

A scene is a set of N anisotropic Gaussians: means ``[N, 3]`` (world), scales ``[N, 3]`` (standard deviations along
the Gaussian's own axes, > 0), rotations ``[N, 4]`` (quaternions ``w, x, y, z``; normalised here), opacities ``[N]``
in [0, 1] and colours ``[N, 3]``. A camera is ``K [3, 3]`` (pixels) and ``world_to_camera [4, 4]`` in the OpenCV
convention (x right, y down, z forward); pixel ``(u, v)`` of the image has its centre at ``(u, v) + pixel_offset``
in K's pixel frame (default 0: centres at integer coordinates with the principal point ``((W - 1) / 2, (H - 1) / 2)``,
the convention of :mod:`backend.scenes.scene3d`'s cameras and rays; 0.5 for K's with ``c = W / 2``). A batch leading dimension ``B`` on
every Gaussian and camera tensor renders B scenes in one call.

The renderer (the 3DGS forward model):

1. the covariance ``Sigma = R S S^T R^T`` (R from the quaternion, S = diag(scales));
2. the camera-frame mean ``t = W mean`` and, through the Jacobian of the perspective map at t (the EWA local affine
   approximation), the screen covariance ``Sigma' = J W Sigma W^T J^T + blur I`` (``blur`` = 0.3 px^2, the 3DGS
   low-pass filter; 0 for the exact projection) and the screen mean ``(fx tx / tz + cx, fy ty / tz + cy)``;
3. per pixel p and Gaussian i: ``alpha_i(p) = min(0.99, o_i exp(-d^T Sigma'^-1 d / 2))``, ``d = p - mu_i``;
4. Gaussians sorted by camera depth tz, composited front to back:
   ``C(p) = sum_i T_i alpha_i c_i + T_N bg`` with ``T_i = prod_{j<i} (1 - alpha_j)``, computed as the exponential of
   an exclusive cumulative sum of ``log(1 - alpha)``; expected depth ``sum_i T_i alpha_i tz_i`` and coverage
   ``1 - T_N`` come out beside the colour.

Gradients flow to means, scales, rotations, opacities, colours, the background and the camera tensors through
autograd (only the depth order and the tile lists are discrete). Gaussians behind ``near`` are dropped.

Vectorised by tiles: the image is cut into ``tile`` x ``tile`` blocks; each block lists the Gaussians whose 3-sigma
screen box touches it (in depth order, padded to the longest list with an empty Gaussian), and every pixel of every
block of every batch item is evaluated in one dense ``[blocks, pixels, listed]`` tensor, in chunks of blocks that
bound the memory. Speed: ``benchmarks/lyra.py`` times N = 250 to 4,000 Gaussians at 128 x 128.

| name | what | shapes |
|---|---|---|
| ``render_gaussians(means, scales, quats, opacities, colors, K, viewmat, width, height, background)`` | the renderer | ``Render``: ``rgb [(B,) H, W, 3]``, ``depth [(B,) H, W]``, ``alpha [(B,) H, W]`` |
| ``SplatRender`` (= ``Render``) | the result | |
| ``Gaussians`` | the five tensors of a Gaussian set; ``.render(camera, ...)`` | |
| ``camera_tensors(camera, dtype)`` | ``K``, ``world_to_camera``, width, height of a :class:`backend.scenes.scene3d.Camera` (or of any object with ``intrinsics()`` / ``world_to_camera()``) | ``[3, 3]``, ``[4, 4]`` |
| ``project(means, scales, quats, K, viewmat, blur)`` | steps 1-2: screen means, screen covariances, camera depths | ``[..., N, 2]``, ``[..., N, 2, 2]``, ``[..., N]`` |
| ``quat_to_rotmat(q)`` | the rotation matrices of quaternions ``w, x, y, z`` | ``[..., 3, 3]`` |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

ALPHA_MAX = 0.99
SIGMA_CUTOFF = 3.0


@dataclass
class Render:
    """A render: ``rgb [(B,) H, W, 3]``, expected depth ``depth [(B,) H, W]`` (0 where nothing is hit) and coverage
    ``alpha [(B,) H, W]`` (1 - the transmittance left after the last Gaussian)."""

    rgb: torch.Tensor
    depth: torch.Tensor
    alpha: torch.Tensor


def quat_to_rotmat(q: torch.Tensor) -> torch.Tensor:
    """Rotation matrices ``[..., 3, 3]`` of quaternions ``q [..., 4]`` (``w, x, y, z``; any non-zero length)."""
    q = q / q.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    w, x, y, z = q.unbind(-1)
    rows = [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]
    return torch.stack(rows, -1).reshape(*q.shape[:-1], 3, 3)


def project(means: torch.Tensor, scales: torch.Tensor, quats: torch.Tensor, K: torch.Tensor, viewmat: torch.Tensor,
            blur: float = 0.3) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Screen means ``[B, N, 2]`` (K's pixel coordinates), screen
    covariances ``[B, N, 2, 2]`` (EWA, plus ``blur`` px^2) and camera depths ``[B, N]`` of Gaussians ``[B, N, ...]``
    seen by cameras ``K [B, 3, 3]``, ``viewmat [B, 4, 4]``. The depth is clamped at 1e-6 before division; callers drop
    Gaussians with depth <= near."""
    R = quat_to_rotmat(quats)                                                      # [B, N, 3, 3]
    M = R * scales[..., None, :]                                                   # R S
    cov3 = M @ M.transpose(-1, -2)                                                 # [B, N, 3, 3]
    Wr, Wt = viewmat[:, None, :3, :3], viewmat[:, None, :3, 3]                     # [B, 1, 3, 3], [B, 1, 3]
    t = (Wr @ means[..., None]).squeeze(-1) + Wt                                   # [B, N, 3]
    z = t[..., 2].clamp_min(1e-6)
    fx, fy = K[:, 0, 0, None], K[:, 1, 1, None]
    cx, cy = K[:, 0, 2, None], K[:, 1, 2, None]
    mu = torch.stack([fx * t[..., 0] / z + cx, fy * t[..., 1] / z + cy], -1)
    zero = torch.zeros_like(z)
    J = torch.stack([torch.stack([fx / z, zero, -fx * t[..., 0] / z ** 2], -1),
                     torch.stack([zero, fy / z, -fy * t[..., 1] / z ** 2], -1)], -2)  # [B, N, 2, 3]
    T = J @ Wr                                                                     # [B, N, 2, 3]
    cov2 = T @ cov3 @ T.transpose(-1, -2)
    if blur:
        cov2 = cov2 + blur * torch.eye(2, dtype=cov2.dtype)
    return mu, cov2, t[..., 2]


def _batch(x: torch.Tensor, dims: int) -> torch.Tensor:
    return x[None] if x.dim() == dims else x


def render_gaussians(means: torch.Tensor, scales: torch.Tensor, quats: torch.Tensor, opacities: torch.Tensor,
                     colors: torch.Tensor, K: torch.Tensor, viewmat: torch.Tensor, width: int, height: int,
                     background: Any = None, near: float = 0.01, blur: float = 0.3, tile: int = 8,
                     pixel_offset: float = 0.0, max_elements: int = 6_000_000) -> Render:
    """Render Gaussians (``means [(B,) N, 3]``, ``scales [(B,) N, 3]``, ``quats [(B,) N, 4]``, ``opacities [(B,) N]``,
    ``colors [(B,) N, C]``) through cameras ``K [(B,) 3, 3]``, ``viewmat [(B,) 4, 4]`` into ``height x width`` images
    over ``background`` (a colour ``[C]`` or ``[B, C]``; black when None). Batched inputs give batched outputs; a
    single camera with batched Gaussians (or the reverse) is broadcast. ``max_elements`` bounds the size of one dense
    pixel x Gaussian block (memory)."""
    single = means.dim() == 2
    means, scales, quats = _batch(means, 2), _batch(scales, 2), _batch(quats, 2)
    opacities, colors = _batch(opacities, 1), _batch(colors, 2)
    K, viewmat = _batch(torch.as_tensor(K, dtype=means.dtype), 2), _batch(torch.as_tensor(viewmat, dtype=means.dtype), 2)
    B = max(means.shape[0], K.shape[0])
    if B > 1 and (means.shape[0] == 1 or K.shape[0] == 1):
        single = False
        means, scales, quats = (x.expand(B, *x.shape[1:]) for x in (means, scales, quats))
        opacities, colors = opacities.expand(B, *opacities.shape[1:]), colors.expand(B, *colors.shape[1:])
        K, viewmat = K.expand(B, 3, 3), viewmat.expand(B, 4, 4)
    N, C = means.shape[1], colors.shape[-1]
    dt = means.dtype
    if background is None:
        bg = torch.zeros(B, C, dtype=dt)
    else:
        bg = torch.as_tensor(background, dtype=dt)
        bg = bg.expand(B, C) if bg.dim() == 1 else bg

    mu, cov2, z = project(means, scales, quats, K, viewmat, blur)
    a, b, c = cov2[..., 0, 0], cov2[..., 0, 1], cov2[..., 1, 1]
    det = (a * c - b * b).clamp_min(1e-12)
    conic = torch.stack([c / det, -b / det, a / det], -1)                         # inverse covariance (A, B, C)
    valid = z > near
    opac = torch.where(valid, opacities, torch.zeros_like(opacities))

    # depth order per batch item
    order = torch.argsort(torch.where(valid, z, torch.full_like(z, float("inf"))).detach(), dim=1)
    take = lambda x: torch.gather(x, 1, order.view(B, N, *([1] * (x.dim() - 2))).expand_as(x))  # noqa: E731
    mu, conic, opac, cols, zs, vs = take(mu), take(conic), take(opac), take(colors), take(z), take(valid)

    # tile lists (no gradient): a Gaussian joins a tile when its 3-sigma box touches it
    ty, tx = -(-height // tile), -(-width // tile)
    with torch.no_grad():
        mid = 0.5 * (a + c)
        lam = mid + torch.sqrt((mid * mid - (a * c - b * b)).clamp_min(0))
        radius = SIGMA_CUTOFF * torch.sqrt(lam)
        radius = take(radius)
        x0 = torch.arange(tx, dtype=dt) * tile + pixel_offset - 0.5                # tile edges in K's frame
        y0 = torch.arange(ty, dtype=dt) * tile + pixel_offset - 0.5
        mx, my = mu[..., 0].detach(), mu[..., 1].detach()
        hit_x = (mx[:, None, :] + radius[:, None, :] >= x0[None, :, None]) & \
                (mx[:, None, :] - radius[:, None, :] <= x0[None, :, None] + tile)       # [B, tx, N]
        hit_y = (my[:, None, :] + radius[:, None, :] >= y0[None, :, None]) & \
                (my[:, None, :] - radius[:, None, :] <= y0[None, :, None] + tile)       # [B, ty, N]
        hit = (hit_y[:, :, None, :] & hit_x[:, None, :, :] & vs[:, None, None, :]).reshape(B * ty * tx, N)
        counts = hit.sum(1)
        L = max(int(counts.max()) if counts.numel() else 0, 1)
        pos = torch.cumsum(hit, 1) - 1
        idx = torch.full((B * ty * tx, L + 1), B * N, dtype=torch.long)           # B*N = the empty Gaussian
        flat = torch.arange(N).expand(B * ty * tx, N) + (torch.arange(B).repeat_interleave(ty * tx) * N)[:, None]
        idx.scatter_(1, torch.where(hit, pos, torch.full_like(pos, L)), flat)
        idx = idx[:, :L]

    pad = lambda x, v: torch.cat([x.reshape(B * N, *x.shape[2:]), torch.full((1, *x.shape[2:]), v, dtype=x.dtype)])  # noqa: E731
    mu_f, conic_f, op_f = pad(mu, 0.0), pad(conic, 0.0), pad(opac, 0.0)
    col_f, z_f = pad(cols, 0.0), pad(zs, 0.0)

    # pixel centres of each tile
    offs = torch.arange(tile, dtype=dt) + 0.5
    py = (y0[:, None] + offs[None, :])                                             # [ty, tile]
    px = (x0[:, None] + offs[None, :])                                             # [tx, tile]
    pix = torch.stack(torch.broadcast_tensors(px[None, :, None, :], py[:, None, :, None]), -1)  # [ty, tx, tile, tile, 2]
    pix = pix.reshape(ty * tx, tile * tile, 2)

    P = tile * tile
    nblocks = B * ty * tx
    # blocks in order of list length, so that each chunk pads its lists only to its own longest one
    blocks = torch.argsort(counts)
    sizes = [max(int(n), 1) for n in counts[blocks].tolist()]
    rgb_parts, depth_parts, alpha_parts = [], [], []
    s = 0
    while s < nblocks:
        nb = 1
        while s + nb < nblocks and (nb + 1) * P * sizes[s + nb] <= max_elements:
            nb += 1
        sel = blocks[s:s + nb]
        Lc = sizes[s + nb - 1]
        ids = idx[sel, :Lc]                                                        # [nb, Lc]
        bi = sel // (ty * tx)
        pp = pix[sel % (ty * tx)]                                                  # [nb, P, 2]
        m, cn = mu_f[ids], conic_f[ids]                                            # [nb, Lc, 2], [nb, Lc, 3]
        d = pp[:, :, None, :] - m[:, None, :, :]                                   # [nb, P, Lc, 2]
        dx, dy = d[..., 0], d[..., 1]
        power = -0.5 * (cn[:, None, :, 0] * dx * dx + cn[:, None, :, 2] * dy * dy) - cn[:, None, :, 1] * dx * dy
        alpha = (op_f[ids][:, None, :] * torch.exp(power.clamp_max(0.0))).clamp_max(ALPHA_MAX)  # [nb, P, Lc]
        log1m = torch.log1p(-alpha)
        log_t = torch.cumsum(log1m, -1)
        w = torch.exp(log_t - log1m) * alpha                                       # T_i alpha_i (exclusive product)
        t_final = torch.exp(log_t[..., -1])                                        # [nb, P]
        rgb_parts.append(torch.einsum("npl,nlc->npc", w, col_f[ids]) + t_final[..., None] * bg[bi][:, None, :])
        depth_parts.append(torch.einsum("npl,nl->np", w, z_f[ids]))
        alpha_parts.append(1 - t_final)
        s += nb
    inverse = torch.argsort(blocks)

    def image(parts: list[torch.Tensor], ch: int | None) -> torch.Tensor:
        x = torch.cat(parts)[inverse].reshape(B, ty, tx, tile, tile, *([ch] if ch else []))
        x = x.transpose(2, 3).reshape(B, ty * tile, tx * tile, *([ch] if ch else []))
        return x[:, :height, :width]

    out = Render(image(rgb_parts, C), image(depth_parts, None), image(alpha_parts, None))
    if single:
        out = Render(out.rgb[0], out.depth[0], out.alpha[0])
    return out


def camera_tensors(camera: Any, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    """``K [3, 3]``, ``world_to_camera [4, 4]``, width and height of a camera object (``intrinsics()``,
    ``world_to_camera()``, ``width``, ``height``: :class:`backend.scenes.scene3d.Camera`)."""
    K = torch.as_tensor(camera.intrinsics(), dtype=dtype)
    W = torch.as_tensor(camera.world_to_camera(), dtype=dtype)
    return K, W, int(camera.width), int(camera.height)


SplatRender = Render


@dataclass
class Gaussians:
    """A set of Gaussians (see the module docstring for shapes); ``render(camera)`` renders it through a camera
    object, ``render_with(K, viewmat, width, height)`` through tensors."""

    means: torch.Tensor
    scales: torch.Tensor
    quats: torch.Tensor
    opacities: torch.Tensor
    colors: torch.Tensor

    def __len__(self) -> int:
        return int(self.means.shape[-2])

    def render_with(self, K: torch.Tensor, viewmat: torch.Tensor, width: int, height: int, background: Any = None,
                    **kw: Any) -> Render:
        return render_gaussians(self.means, self.scales, self.quats, self.opacities, self.colors, K, viewmat,
                                width, height, background, **kw)

    def render(self, camera: Any, background: Any = None, **kw: Any) -> Render:
        K, W, w, h = camera_tensors(camera, self.means.dtype)
        return self.render_with(K, W, w, h, background, **kw)

    def detach(self) -> Gaussians:
        return Gaussians(*(x.detach() for x in (self.means, self.scales, self.quats, self.opacities, self.colors)))
