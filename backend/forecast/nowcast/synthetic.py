"""Synthetic radar / satellite / NWP world for the RainPro-8 miniature (no radar archive can be downloaded here).

RainPro-8 (Pablos Sarabia et al., "RainPro-8: An Efficient Deep Learning Model to Estimate Rainfall Probabilities over
8 Hours", ICLR 2026, arXiv 2505.10271) fuses radar, geostationary satellite and NWP. This module generates seeded cases
with the same three sources, on a small grid we can afford on a CPU:

Grid and time (fixed): 64 x 64 pixels of 4 km (a 256 km square), 15-minute steps, 4 input radar frames (45 min of
history) and 32 leads (8 hours). Rain rate in mm/h.

Rain (the "truth" that radar observes without error):
- a log-rain Gaussian field with a power-law spectrum (power ~ k^-3.5) on a 160 x 160 periodic domain, evolving in
  the Lagrangian frame by a per-wavenumber AR(1) whose lifetime grows with scale (6 h at 32 km, ~ scale^1.2: 8-km
  features live about an hour, 128-km systems a day), the scale-dependent predictability that STEPS also assumes;
- advected by a smooth affine flow u(x) = U + A (x - c) (speed 0.3-1.5 px per step = 5-24 km/h, weak rotation, shear
  and deformation), solved exactly so that parcels move without numerical diffusion; rain enters from outside the radar
  window (seen only by the NWP channel);
- thresholded and exponentiated (a random wet fraction of 15-50 %, rain from 0.1 mm/h upward, exponent 1.4-2.2) with
  a slow per-case intensity trend (systems grow or decay over hours), capped at 150 mm/h;
- plus convective cells (Gaussian, 4-14 km radius, peaks ~10 mm/h) born at random (Poisson, a per-case rate), that
  grow, mature and decay over 1-3.5 hours while moving with the flow.

Satellite-like channel (10.8 um brightness temperature, K): a cloud proxy that is wider than the rain (lower threshold),
sees every parcel's rain 45 minutes ahead (clouds grow before they rain) and each convective cell from 45 minutes
before its first rain (a growing cold cloud), blurred (sigma 1 px) and noisy (1.5 K).

NWP-like channel (mm/h): issued at the forecast time, hourly (9 frames, 0-8 h), on a 4x coarser grid (16 km), smoothed,
and wrong in documented ways, all fixed in ``WorldConfig`` before any model was trained:
- its own weather: the log-rain field it sees is cos(a) G + sin(a) G' with G' an independent field of the same
  statistics and a growing from 20 degrees at analysis time to 50 degrees at +8 h (errors that grow with lead);
- position error: an initial displacement N(0, 4 px) per axis (16 km) that drifts by N(0, 1 px) per axis per hour;
- timing error: it shows the truth at valid time + tau, tau = round(N(0, 1.2 steps)) clipped to +-2 steps (+-30 min);
- amplitude: a multiplicative bias exp(N(log 0.85, 0.25)) and a coarse multiplicative noise exp(N(0, 0.35));
- convection: it resolves each convective cell with probability 0.5 (missed cells are absent).
With these statistics the NWP channel overtakes Lucas-Kanade extrapolation in CSI at 1 mm/h after about 2.5 hours
(pooled CSI of extrapolation vs NWP on 48 cases: 0.37 vs 0.31 at +2 h, 0.26 vs 0.28 at +3 h; ``python -m backend
nowcast evaluate --cases 48 --method extrapolation --method nwp``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import ndimage
from scipy.linalg import expm
from scipy.special import ndtri


@dataclass(frozen=True)
class WorldConfig:
    """The synthetic world. Defaults are the miniature's fixed settings (do not change them after training)."""

    size: int = 64                 # radar window, pixels per side
    pixel_km: float = 4.0
    timestep_min: float = 15.0
    n_inputs: int = 4              # radar frames t0-3 .. t0
    n_leads: int = 32              # t0+1 .. t0+32 (8 h)
    field_size: int = 160          # periodic Lagrangian domain
    ext: int = 16                  # extra margin around the window (for NWP displacement)
    spectral_slope: float = 3.5    # power spectrum ~ k^-slope
    lifetime_ref_min: float = 360.0
    scale_ref_km: float = 32.0
    lifetime_exponent: float = 1.2
    wet_fraction: tuple[float, float] = (0.15, 0.5)
    log_sigma: tuple[float, float] = (1.4, 2.2)     # rain = 0.1 * exp(sigma * (G - g0)) where G > g0
    rain_floor_mmh: float = 0.1
    trend_sd: float = 0.012        # per-step drift of g0 (intensification/decay)
    speed_px: tuple[float, float] = (0.3, 1.5)
    deform_sd: float = 0.004       # entries of A, per step
    cell_rate: float = 0.5         # mean births per step over the periodic domain (x U(0, 2) per case)
    cell_peak_log_mean: float = float(np.log(10.0))
    cell_peak_log_sd: float = 0.5
    cell_radius_px: tuple[float, float] = (1.0, 3.5)
    cell_growth_steps: tuple[int, int] = (2, 4)
    cell_mature_steps: tuple[int, int] = (1, 5)
    cell_decay_steps: tuple[int, int] = (2, 5)
    sat_lead_steps: int = 3        # satellite sees rain 45 min ahead
    sat_noise_k: float = 1.5
    nwp_coarse: int = 4
    nwp_pos_sd_px: float = 4.0
    nwp_drift_sd_px_per_h: float = 1.0
    nwp_time_sd_steps: float = 1.2
    nwp_bias_log_mean: float = float(np.log(0.85))
    nwp_bias_log_sd: float = 0.25
    nwp_noise_log_sd: float = 0.35
    nwp_cell_prob: float = 0.5
    nwp_diverge_deg: tuple[float, float] = (20.0, 50.0)   # its weather mixes in an independent field: sin(angle)
    rain_cap_mmh: float = 150.0

    @property
    def steps_per_hour(self) -> int:
        return round(60 / self.timestep_min)

    @property
    def nwp_hours(self) -> int:
        return self.n_leads // self.steps_per_hour


@dataclass
class NWPErrors:
    """The error draw of one NWP run (documented statistics in the module docstring)."""

    offset_px: tuple[float, float]
    drift_px_per_h: tuple[float, float]
    time_shift_steps: int
    bias: float


@dataclass
class Case:
    """One forecast case.

    radar: (n_inputs + n_leads, H, W) mm/h, frames t0-3 .. t0+32 (the last n_leads are the truth to verify against).
    satellite: (n_inputs, H, W) K, at the input times.
    nwp: (nwp_hours + 1, H/4, W/4) mm/h, hourly from t0 to t0+8 h, issued at t0.
    """

    radar: np.ndarray
    satellite: np.ndarray
    nwp: np.ndarray
    seed: int
    t0_index: int = 0
    velocity_px: tuple[float, float] = (0.0, 0.0)
    nwp_errors: dict = field(default_factory=dict)
    config: WorldConfig = field(default_factory=WorldConfig)

    @property
    def inputs(self) -> np.ndarray:
        return self.radar[: self.config.n_inputs]

    @property
    def truth(self) -> np.ndarray:
        return self.radar[self.config.n_inputs:]

    def nwp_at_leads(self) -> np.ndarray:
        """The NWP channel as a forecast on the radar grid: (n_leads, H, W) mm/h (time-linear, bilinear in space)."""
        return nwp_to_leads(self.nwp, self.config)


def nwp_to_leads(nwp: np.ndarray, cfg: WorldConfig) -> np.ndarray:
    """Hourly coarse NWP (hours+1, h, w) -> (n_leads, size, size): linear in time, bilinear upsampling in space."""
    sph = cfg.steps_per_hour
    fine = upsample(nwp, cfg.size)
    out = np.empty((cfg.n_leads, cfg.size, cfg.size), np.float32)
    for lead in range(1, cfg.n_leads + 1):
        h0, frac = divmod(lead, sph)
        frac = frac / sph
        nxt = fine[min(h0 + 1, fine.shape[0] - 1)]
        out[lead - 1] = (1 - frac) * fine[h0] + frac * nxt
    return out


def upsample(coarse: np.ndarray, size: int) -> np.ndarray:
    """(T, h, w) -> (T, size, size), bilinear with pixel-centre alignment (edges held)."""
    _, h, w = coarse.shape
    ys = (np.arange(size) + 0.5) * h / size - 0.5
    xs = (np.arange(size) + 0.5) * w / size - 0.5
    yy, xx = np.meshgrid(np.clip(ys, 0, h - 1), np.clip(xs, 0, w - 1), indexing="ij")
    return np.stack([ndimage.map_coordinates(c, [yy, xx], order=1, mode="nearest") for c in coarse]).astype(np.float32)


# --------------------------------------------------------------------------------------------------------- the field
def _spectral_setup(cfg: WorldConfig) -> tuple[np.ndarray, np.ndarray]:
    """Amplitude filter (unit-variance field) and AR(1) coefficient per wavenumber on the periodic domain."""
    n = cfg.field_size
    k = np.fft.fftfreq(n) * n
    kk = np.sqrt(k[:, None] ** 2 + k[None, :] ** 2)
    kk[0, 0] = 1.0
    amp = kk ** (-cfg.spectral_slope / 2)
    amp[0, 0] = 0.0
    amp /= np.sqrt(np.sum(amp**2) / n**2)  # Var of ifft(amp * W_hat) = 1 for white W with unit variance
    scale_km = n * cfg.pixel_km / kk
    tau = cfg.lifetime_ref_min * (scale_km / cfg.scale_ref_km) ** cfg.lifetime_exponent
    phi = np.exp(-cfg.timestep_min / tau)
    return amp, phi


def _affine_flow(cfg: WorldConfig, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    speed = rng.uniform(*cfg.speed_px)
    ang = rng.uniform(0, 2 * np.pi)
    u = np.array([speed * np.sin(ang), speed * np.cos(ang)])  # (dy, dx) per step
    a = rng.normal(0, cfg.deform_sd, size=(2, 2))
    return u, a


def _flow_maps(u: np.ndarray, a: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """For y' = u + A y: y(t) = E y(0) + V with E = exp(A t), V = int_0^t exp(A s) ds u (block-exponential trick)."""
    m = np.zeros((3, 3))
    m[:2, :2] = a * t
    m[:2, 2] = u * t
    e = expm(m)
    return e[:2, :2], e[:2, 2]


def _cells(cfg: WorldConfig, rng: np.random.Generator, t_first: int, t_last: int, rate: float) -> list[dict]:
    """Convective cells born in [t_first - 12, t_last] anywhere on the periodic domain (origin-centred coordinates)."""
    n = cfg.field_size
    cells = []
    for tb in range(t_first - 12, t_last + 1):
        for _ in range(rng.poisson(rate)):
            g = int(rng.integers(cfg.cell_growth_steps[0], cfg.cell_growth_steps[1] + 1))
            m = int(rng.integers(cfg.cell_mature_steps[0], cfg.cell_mature_steps[1] + 1))
            d = int(rng.integers(cfg.cell_decay_steps[0], cfg.cell_decay_steps[1] + 1))
            cells.append({
                "tb": tb, "y": rng.uniform(-n / 2, n / 2), "x": rng.uniform(-n / 2, n / 2),
                "peak": float(np.exp(rng.normal(cfg.cell_peak_log_mean, cfg.cell_peak_log_sd))),
                "r": rng.uniform(*cfg.cell_radius_px), "g": g, "m": m, "d": d,
                "nwp": bool(rng.random() < cfg.nwp_cell_prob),
            })
    return cells


def _cell_life(c: dict, age: float, lead: int) -> tuple[float, float]:
    """(rain factor, cloud factor) of a cell at ``age`` steps; the cloud starts ``lead`` steps before the rain."""
    g, m, d = c["g"], c["m"], c["d"]
    if age < 0:
        rain = 0.0
    elif age < g:
        rain = (age + 1) / (g + 1)
    elif age < g + m:
        rain = 1.0
    elif age < g + m + d:
        rain = 1 - (age - g - m + 1) / (d + 1)
    else:
        rain = 0.0
    if -lead <= age < 0:  # the cloud grows before the first rain: 0.5 at `lead` steps ahead, 0.9 one step ahead
        cloud = 0.5 + 0.4 * (age + lead) / max(lead - 1, 1)
    elif 0 <= age < g:
        cloud = max(rain, 0.9)
    else:
        cloud = rain
    if age >= g + m + d:
        cloud = max(0.0, 0.5 - 0.25 * (age - g - m - d))
    return rain, cloud


def simulate(seed: int, n_frames: int, cfg: WorldConfig = WorldConfig()) -> dict[str, np.ndarray | dict]:
    """Simulate ``n_frames`` consecutive frames on the extended window (size + 2 ext).

    Returns ``rain`` (n_frames, S, S) mm/h, ``rain_nwp`` (same, with only NWP-resolved cells), ``cloud`` (n_frames, S, S)
    cloud proxy in [0, 1) (satellite sees ``sat_lead_steps`` ahead), ``meta`` (flow, wet fraction...), S = size + 2 ext.
    """
    rng = np.random.default_rng(seed)
    n, s, lead = cfg.field_size, cfg.size + 2 * cfg.ext, cfg.sat_lead_steps
    amp, phi = _spectral_setup(cfg)
    innov = np.sqrt(1 - phi**2) * amp
    u, a = _affine_flow(cfg, rng)
    wet = rng.uniform(*cfg.wet_fraction)
    g0 = float(ndtri(1 - wet))
    sigma = rng.uniform(*cfg.log_sigma)
    trend = rng.normal(0, cfg.trend_sd)
    total = n_frames + lead
    rate = cfg.cell_rate * rng.uniform(0, 2)
    cells = _cells(cfg, rng, 0, total, rate)
    # window pixel coordinates, centred on the domain centre (the flow's reference point c = 0)
    ax = np.arange(s) - (s - 1) / 2
    yy, xx = np.meshgrid(ax, ax, indexing="ij")
    pos = np.stack([yy.ravel(), xx.ravel()])
    spec = amp * np.fft.fft2(rng.standard_normal((n, n)))
    spec_alt = amp * np.fft.fft2(rng.standard_normal((n, n)))  # the NWP's own, diverging weather
    fields, fields_alt = [], []
    for t in range(total):
        if t > 0:
            spec = phi * spec + innov * np.fft.fft2(rng.standard_normal((n, n)))
            spec_alt = phi * spec_alt + innov * np.fft.fft2(rng.standard_normal((n, n)))
        e, v = _flow_maps(u, a, t)
        lab = np.linalg.solve(e, pos - v[:, None]) + n / 2 - 0.5  # Lagrangian label of each window pixel
        for sp, out in ((spec, fields), (spec_alt, fields_alt)):
            gl = np.real(np.fft.ifft2(sp))
            out.append(ndimage.map_coordinates(gl, lab, order=1, mode="grid-wrap").reshape(s, s))
    fields = np.asarray(fields, np.float32)
    fields_alt = np.asarray(fields_alt[:n_frames], np.float32)
    thr = (g0 - trend * np.arange(n_frames)).astype(np.float32)
    # satellite: the same parcels `lead` steps later. Parcel labels depend on time, so resample G(t+lead) at labels(t).
    rain = np.zeros((n_frames, s, s), np.float32)
    cells_nwp = np.zeros_like(rain)
    cloud = np.zeros_like(rain)
    for t in range(n_frames):
        g_now = fields[t]
        rain[t] = _rain(g_now, thr[t], sigma, cfg)
        g_ahead = _ahead(fields, t, lead, u, a, cfg)
        cl = np.maximum(g_now, g_ahead) - (thr[t] - 0.6)
        cloud[t] = 1 - np.exp(-np.logaddexp(0, 2 * cl))
    # cells
    for c in cells:
        for t in range(n_frames):
            age = t - c["tb"]
            r_f, c_f = _cell_life(c, age, lead)
            if r_f <= 0 and c_f <= 0:
                continue
            e, v = _flow_maps(u, a, age)
            p = e @ np.array([c["y"], c["x"]]) + v
            p = (p + n / 2) % n - n / 2  # periodic
            if np.abs(p).max() > s / 2 + 4 * 1.8 * c["r"]:
                continue
            d2 = (yy - p[0]) ** 2 + (xx - p[1]) ** 2
            if r_f > 0:
                blob = (c["peak"] * r_f * np.exp(-d2 / (2 * c["r"] ** 2))).astype(np.float32)
                blob[blob < cfg.rain_floor_mmh] = 0.0
                rain[t] += blob
                if c["nwp"]:
                    cells_nwp[t] += blob
            if c_f > 0:
                cloud[t] = np.maximum(cloud[t], c_f * np.exp(-d2 / (2 * (1.8 * c["r"]) ** 2)))
    meta = {"velocity_px": (float(u[0]), float(u[1])), "deformation": a.round(5).tolist(), "wet_fraction": wet,
            "log_sigma": sigma, "trend": trend, "cell_rate": rate}
    np.minimum(rain, cfg.rain_cap_mmh, out=rain)
    return {"rain": rain, "g": fields[:n_frames], "g_alt": fields_alt, "thr": thr, "sigma": sigma, "cells_nwp": cells_nwp,
            "cloud": cloud, "meta": meta}


def _rain(g: np.ndarray, thr: float, sigma: float, cfg: WorldConfig) -> np.ndarray:
    """Log-rain field -> rain rate (mm/h): zero below the threshold, rain_floor * exp(sigma * excess) above."""
    return np.where(g > thr, cfg.rain_floor_mmh * np.exp(sigma * np.maximum(g - thr, 0)), 0.0).astype(np.float32)


def _ahead(fields: np.ndarray, t: int, lead: int, u: np.ndarray, a: np.ndarray, cfg: WorldConfig) -> np.ndarray:
    """G of the parcels now at each window pixel, ``lead`` steps later: the Eulerian field at t+lead, traced back along
    the flow (a pure spatial resampling of frame t+lead at the parcels' future positions)."""
    s = fields.shape[-1]
    e, v = _flow_maps(u, a, lead)
    ax = np.arange(s) - (s - 1) / 2
    yy, xx = np.meshgrid(ax, ax, indexing="ij")
    fut = e @ np.stack([yy.ravel(), xx.ravel()]) + v[:, None] + (s - 1) / 2
    return ndimage.map_coordinates(fields[t + lead], fut, order=1, mode="nearest").reshape(s, s)


def _satellite(cloud: np.ndarray, rng: np.random.Generator, cfg: WorldConfig) -> np.ndarray:
    bt = 290.0 - 70.0 * cloud + rng.normal(0, cfg.sat_noise_k, cloud.shape)
    return ndimage.gaussian_filter(bt, sigma=(0, 1, 1)).astype(np.float32)


def _nwp_run(sim: dict, t0: int, rng: np.random.Generator, cfg: WorldConfig) -> tuple[np.ndarray, NWPErrors]:
    """Hourly coarse NWP issued at frame ``t0`` of a simulation (see the module docstring for its errors)."""
    sph, k, ext, size = cfg.steps_per_hour, cfg.nwp_coarse, cfg.ext, cfg.size
    off = rng.normal(0, cfg.nwp_pos_sd_px, 2)
    drift = rng.normal(0, cfg.nwp_drift_sd_px_per_h, 2)
    tau = int(np.clip(np.round(rng.normal(0, cfg.nwp_time_sd_steps)), -2, 2))
    bias = float(np.exp(rng.normal(cfg.nwp_bias_log_mean, cfg.nwp_bias_log_sd)))
    out = []
    for h in range(cfg.nwp_hours + 1):
        t = int(np.clip(t0 + h * sph + tau, 0, sim["rain"].shape[0] - 1))
        w = np.sin(np.deg2rad(cfg.nwp_diverge_deg[0] + (cfg.nwp_diverge_deg[1] - cfg.nwp_diverge_deg[0]) * h / cfg.nwp_hours))
        g = np.sqrt(1 - w**2) * sim["g"][t] + w * sim["g_alt"][t]
        rain = np.minimum(_rain(g, sim["thr"][t], sim["sigma"], cfg) + sim["cells_nwp"][t], cfg.rain_cap_mmh)
        d = np.clip(off + drift * h, -ext + 1, ext - 1)
        shifted = ndimage.shift(rain, -d, order=1, mode="nearest")[ext:ext + size, ext:ext + size]
        coarse = shifted.reshape(size // k, k, size // k, k).mean(axis=(1, 3))
        coarse = ndimage.gaussian_filter(coarse, 0.7)
        coarse *= bias * np.exp(rng.normal(0, cfg.nwp_noise_log_sd, coarse.shape))
        out.append(coarse)
    err = NWPErrors((float(off[0]), float(off[1])), (float(drift[0]), float(drift[1])), tau, bias)
    return np.asarray(out, np.float32), err


def make_cases(seed: int, n_cases: int = 1, stride: int = 4, cfg: WorldConfig = WorldConfig()) -> list[Case]:
    """``n_cases`` forecast cases from one simulated episode (issue times ``stride`` steps apart).

    Same seed, same cases. The first case's issue time is frame n_inputs - 1 of the episode.
    """
    n_frames = cfg.n_inputs + cfg.n_leads + (n_cases - 1) * stride + 3
    sim = simulate(seed, n_frames, cfg)
    rng = np.random.default_rng([seed, 1])
    e, s = cfg.ext, cfg.size
    sat = _satellite(sim["cloud"], rng, cfg)
    cases = []
    for i in range(n_cases):
        t0 = cfg.n_inputs - 1 + i * stride
        sl = slice(t0 - cfg.n_inputs + 1, t0 + cfg.n_leads + 1)
        nwp, err = _nwp_run(sim, t0, rng, cfg)
        cases.append(Case(
            radar=sim["rain"][sl, e:e + s, e:e + s].copy(),
            satellite=sat[t0 - cfg.n_inputs + 1:t0 + 1, e:e + s, e:e + s].copy(),
            nwp=nwp, seed=seed, t0_index=i, velocity_px=sim["meta"]["velocity_px"], nwp_errors=asdict(err), config=cfg,
        ))
    return cases


def make_case(seed: int, cfg: WorldConfig = WorldConfig()) -> Case:
    """One seeded case (the page's and the CLI's ``--case seed=N``)."""
    return make_cases(seed, 1, cfg=cfg)[0]


def translation_sequence(shape: tuple[int, int] = (64, 64), shift: tuple[float, float] = (1.0, 2.0), n_frames: int = 8,
                         seed: int = 0) -> np.ndarray:
    """A rain-like field (power-law, thresholded) translated rigidly by ``shift`` (dy, dx) px per frame, periodic.

    (n_frames, H, W) mm/h; the invariant tests' pure-advection case.
    """
    rng = np.random.default_rng(seed)
    h, w = shape
    ky = np.fft.fftfreq(h)[:, None] * h
    kx = np.fft.fftfreq(w)[None, :] * w
    kk = np.sqrt(ky**2 + kx**2)
    kk[0, 0] = 1
    amp = kk**-1.5
    amp[0, 0] = 0
    base = np.fft.fft2(rng.standard_normal(shape)) * amp
    frames = []
    for t in range(n_frames):
        phase = np.exp(-2j * np.pi * (ky / h * shift[0] * t + kx / w * shift[1] * t))
        g = np.real(np.fft.ifft2(base * phase))
        g = (g - g.mean()) / g.std()
        frames.append(np.where(g > 0.3, 0.1 * np.exp(1.3 * (g - 0.3)), 0.0))
    return np.asarray(frames, np.float32)
