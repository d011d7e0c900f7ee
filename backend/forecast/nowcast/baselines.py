"""The nowcasting methods of the page, one :class:`~backend.registry.Registry` (``get_method(name)``, as pysteps'
own interfaces):

| name            | what                                                                           | needs        |
|-----------------|--------------------------------------------------------------------------------|--------------|
| ``model``         | the RainPro-8-style multi-source network (assets/nowcast_model.safetensors)    | weights      |
| ``unet``          | deterministic U-Net, same backbone and inputs, trained with MSE               | weights      |
| ``nwp``           | the NWP-like channel itself (hourly, coarse; linear in time, bilinear in space) | NWP          |
| ``persistence``   | pysteps ``eulerian``: the last radar frame, unchanged                           | radar        |
| ``extrapolation`` | pysteps Lucas-Kanade motion + semi-Lagrangian ``extrapolation``                 | radar        |
| ``sprog``         | pysteps S-PROG (cascade + AR(2) per level, Seed 2003)                            | radar        |
| ``steps``         | pysteps STEPS ensemble (20 members; Bowler, Pierce and Seed 2006)                | radar        |
| ``steps_blended`` | pysteps ``blending.steps``: STEPS blended with the NWP channel (Imhoff 2023)    | radar + NWP  |

Every entry is a :class:`Method`, called as ``method(inp: NowcastInputs, n_leads, seed, progress) -> verify.Forecast``,
that also says whether it needs the NWP channel, its ensemble size and the weights it loads. pysteps
methods run in dBR (10 log10 R, 0.1 mm/h as the rain/no-rain threshold, as in the pysteps examples) and return mm/h.
Motion for every pysteps method is pysteps' dense Lucas-Kanade on the 4 dBR input frames. The NWP motion for the
blending is the radar motion (the hourly, 16 km NWP is too smooth for optical flow).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import InputError
from ...registry import Registry
from ...runtime import ASSETS, Progress, report, timed
from .synthetic import Case, WorldConfig, nwp_to_leads, upsample
from .verify import THRESHOLDS_MMH, Forecast, ensemble_exceedance, pysteps_quiet

MODEL_FILE = ASSETS / "nowcast_model.safetensors"
UNET_FILE = ASSETS / "nowcast_unet.safetensors"
RAIN_THR_MMH = 0.1
N_MEMBERS = 20
N_CASCADE = 5


@dataclass
class NowcastInputs:
    """What a forecast may use. radar: (n_inputs, H, W) mm/h oldest first; satellite: (n_sat, H, W) K or None;
    nwp: (hours + 1, h, w) mm/h hourly coarse run issued at t0, or None (radar-only path)."""

    radar: np.ndarray
    satellite: np.ndarray | None = None
    nwp: np.ndarray | None = None
    pixel_km: float = 4.0
    timestep_min: float = 15.0
    config: WorldConfig = field(default_factory=WorldConfig)

    @classmethod
    def from_case(cls, case: Case) -> NowcastInputs:
        return cls(case.inputs, case.satellite, case.nwp, case.config.pixel_km, case.config.timestep_min, case.config)


# ------------------------------------------------------------------------------------------------- pysteps glue
@contextlib.contextmanager
def _quiet():
    """pysteps prints its progress on stdout: keep it off the CLI's JSON and the page's logs."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def _db(r: np.ndarray) -> tuple[np.ndarray, dict]:
    ps = pysteps_quiet()
    from pysteps.utils import transformation

    _ = ps
    with _quiet():
        return transformation.dB_transform(np.asarray(r, np.float64), metadata={"threshold": RAIN_THR_MMH,
                                           "zerovalue": 0.0, "transform": None, "unit": "mm/h"},
                                           threshold=RAIN_THR_MMH, zerovalue=-15.0)


def _undb(x: np.ndarray, meta: dict) -> np.ndarray:
    from pysteps.utils import transformation

    with _quiet():
        r, _ = transformation.dB_transform(np.nan_to_num(x, nan=-15.0), meta, inverse=True)
    r = np.nan_to_num(np.asarray(r, np.float32))
    r[r < RAIN_THR_MMH] = 0.0
    return r


def motion_field(radar: np.ndarray) -> np.ndarray:
    """pysteps dense Lucas-Kanade on the dBR inputs: (2, H, W) px per step (x, y components)."""
    pysteps_quiet()
    from pysteps import motion

    db, _ = _db(radar)
    with _quiet():
        v = motion.get_method("lucaskanade")(db)
    return np.nan_to_num(np.asarray(v, np.float64))


def _check_motion_input(radar: np.ndarray, need: int = 3) -> None:
    if radar.shape[0] < need:
        raise InputError(f"Motion estimation needs at least {need} radar frames; got {radar.shape[0]}.")


def _dry(inp: NowcastInputs) -> bool:
    """No rain in the last radar frame: radar-only methods have nothing to move (pysteps cannot fit a cascade on an
    empty field), so their forecast is no rain."""
    return not np.any(inp.radar[-1] >= RAIN_THR_MMH)


DRY_NOTE = "no rain >= 0.1 mm/h in the last radar frame: the radar-only forecast is no rain"


def _ar_order(radar: np.ndarray) -> int:
    """AR order the cascade methods can fit: 2 when the last 3 frames all have rain, 1 when only the last 2 do, else 0
    (pysteps' S-PROG and STEPS need rain in each frame they correlate; 0 means: extrapolate the last frame)."""
    wet = [bool(np.any(f >= RAIN_THR_MMH)) for f in radar[-3:][::-1]]
    n = 0
    for w in wet:
        if not w:
            break
        n += 1
    return min(2, n - 1) if n else 0


AR_NOTE = "only {n} recent radar frame(s) with rain: {what}"


def _dry_forecast(name: str, inp: NowcastInputs, n_leads: int, members: int = 0) -> Forecast:
    zeros = np.zeros((n_leads,) + inp.radar.shape[-2:], np.float32)
    if members:
        ens = np.zeros((members,) + zeros.shape, np.float32)
        return Forecast(name, rain=zeros, probs=ensemble_exceedance(ens, THRESHOLDS_MMH), ensemble=ens, note=DRY_NOTE,
                        costs={"members": members, "passes": members})
    return Forecast(name, rain=zeros, note=DRY_NOTE, costs={"passes": 1})


# ---------------------------------------------------------------------------------------------------- methods
def persistence(inp: NowcastInputs, n_leads: int, seed: int = 0, progress: Progress | None = None) -> Forecast:
    pysteps_quiet()
    from pysteps import nowcasts

    clock = timed()
    with _quiet():
        out = nowcasts.get_method("eulerian")(np.asarray(inp.radar[-1], np.float64), None, n_leads)
    return Forecast("persistence", rain=np.asarray(out, np.float32), seconds=clock(), costs={"passes": 1})


def extrapolation(inp: NowcastInputs, n_leads: int, seed: int = 0, progress: Progress | None = None) -> Forecast:
    _check_motion_input(inp.radar)
    if _dry(inp):
        return _dry_forecast("extrapolation", inp, n_leads)
    pysteps_quiet()
    from pysteps import nowcasts

    clock = timed()
    v = motion_field(inp.radar)
    report(progress, 0.5, "extrapolating")
    with _quiet():
        out = nowcasts.get_method("extrapolation")(np.asarray(inp.radar[-1], np.float64), v, n_leads)
    return Forecast("extrapolation", rain=np.nan_to_num(np.asarray(out, np.float32)), motion=v.astype(np.float32),
                    seconds=clock(), costs={"passes": 1})


def sprog(inp: NowcastInputs, n_leads: int, seed: int = 0, progress: Progress | None = None) -> Forecast:
    _check_motion_input(inp.radar)
    if _dry(inp):
        return _dry_forecast("sprog", inp, n_leads)
    pysteps_quiet()
    from pysteps import nowcasts

    order = _ar_order(inp.radar)
    if order == 0:
        fc = extrapolation(inp, n_leads, seed, progress)
        return Forecast("sprog", rain=fc.rain, motion=fc.motion, seconds=fc.seconds, costs=fc.costs,
                        note=AR_NOTE.format(n=1, what="S-PROG falls back to extrapolation"))
    clock = timed()
    v = motion_field(inp.radar)
    db, meta = _db(inp.radar)
    report(progress, 0.3, "S-PROG cascade")
    note = "" if order == 2 else AR_NOTE.format(n=2, what="AR(1) instead of AR(2)")
    try:
        with _quiet():
            out = nowcasts.get_method("sprog")(db[-(order + 1):], v, n_leads, precip_thr=meta["threshold"],
                                               n_cascade_levels=N_CASCADE, ar_order=order)
    except ValueError:  # pysteps cannot fit the AR model (e.g. a cascade level without variance on a tiny rain area)
        fc = extrapolation(inp, n_leads, seed, progress)
        return Forecast("sprog", rain=fc.rain, motion=fc.motion, seconds=clock(), costs=fc.costs,
                        note="S-PROG could not fit its AR model on this rain field: extrapolation used instead")
    return Forecast("sprog", rain=_undb(out, meta), motion=v.astype(np.float32), seconds=clock(), costs={"passes": 1},
                    note=note)


def steps(inp: NowcastInputs, n_leads: int, seed: int = 0, progress: Progress | None = None,
          n_members: int = N_MEMBERS) -> Forecast:
    _check_motion_input(inp.radar)
    if _dry(inp):
        return _dry_forecast("steps", inp, n_leads, n_members)
    pysteps_quiet()
    from pysteps import nowcasts

    order = max(1, _ar_order(inp.radar))  # with one wet frame, AR(1) on the last two (pysteps needs two)
    clock = timed()
    v = motion_field(inp.radar)
    db, meta = _db(inp.radar)
    done = [0]

    def callback(_fields):
        done[0] += 1
        report(progress, done[0] / n_leads, f"STEPS lead {done[0]}/{n_leads}")

    with _quiet():
        ens = nowcasts.get_method("steps")(
            db[-(order + 1):], v, n_leads, n_ens_members=n_members, n_cascade_levels=N_CASCADE,
            precip_thr=meta["threshold"], kmperpixel=inp.pixel_km, timestep=inp.timestep_min, ar_order=order,
            noise_method="nonparametric", vel_pert_method="bps", mask_method="incremental", probmatching_method="cdf",
            seed=seed, callback=callback, return_output=True)
    ens = _undb(ens, meta)
    fc = _ensemble_forecast("steps", ens, v, clock(), n_members)
    fc.note = "" if order == 2 else AR_NOTE.format(n=order, what=f"AR({order}) instead of AR(2)")
    return fc


def steps_blended(inp: NowcastInputs, n_leads: int, seed: int = 0, progress: Progress | None = None,
                  n_members: int = N_MEMBERS) -> Forecast:
    _check_motion_input(inp.radar)
    if inp.nwp is None:
        raise InputError("Blended STEPS needs the NWP channel; uploaded radar-only sequences cannot use it.")
    pysteps_quiet()
    from pysteps import blending

    clock = timed()
    v = motion_field(inp.radar)
    db, meta = _db(inp.radar)
    size = inp.radar.shape[-1]
    nwp = np.concatenate([upsample(inp.nwp[:1], size), nwp_to_leads(inp.nwp, inp.config)[:n_leads]])
    nwp_db, _ = _db(nwp)
    v_models = np.repeat(v[None, None], n_leads + 1, axis=1)
    done = [0]

    def callback(_fields):
        done[0] += 1
        report(progress, done[0] / n_leads, f"blended STEPS lead {done[0]}/{n_leads}")

    with tempfile.TemporaryDirectory() as skill_dir, _quiet():
        ens = blending.steps.forecast(
            precip=db[-3:], precip_models=nwp_db[None], velocity=v, velocity_models=v_models, timesteps=n_leads,
            timestep=inp.timestep_min, issuetime=dt.datetime(2025, 1, 1, 12, 0), n_ens_members=n_members,
            n_cascade_levels=N_CASCADE, blend_nwp_members=False, precip_thr=meta["threshold"], kmperpixel=inp.pixel_km,
            noise_method="nonparametric", vel_pert_method="bps", weights_method="bps", mask_method="incremental",
            probmatching_method="cdf", seed=seed, outdir_path_skill=skill_dir, callback=callback)
    ens = _undb(ens, meta)
    return _ensemble_forecast("steps_blended", ens, v, clock(), n_members)


def _ensemble_forecast(name: str, ens: np.ndarray, v: np.ndarray, seconds: float, n_members: int) -> Forecast:
    return Forecast(name, rain=np.median(ens, axis=0), probs=ensemble_exceedance(ens, THRESHOLDS_MMH), ensemble=ens,
                    motion=v.astype(np.float32), seconds=seconds, costs={"members": n_members, "passes": n_members})


def nwp(inp: NowcastInputs, n_leads: int, seed: int = 0, progress: Progress | None = None) -> Forecast:
    if inp.nwp is None:
        raise InputError("The NWP channel is not available for uploaded radar-only sequences.")
    clock = timed()
    out = nwp_to_leads(inp.nwp, inp.config)[:n_leads]
    return Forecast("nwp", rain=out, seconds=clock(), costs={"passes": 0})


# ---------------------------------------------------------------------------------------------- neural methods
_LOADED: dict[str, tuple] = {}


def load_network(path: Path) -> tuple[object, dict, dict]:
    """Load (and cache per process) a network's safetensors weights: (model, metadata ``extra``, costs). Missing or
    altered weights -> :class:`backend.weights.WeightsError` (an InputError). Costs: parameters and
    multiply-accumulates of one forward pass."""
    key = str(path)
    if key not in _LOADED:
        from .model import count_macs, count_parameters, load_model

        net, meta = load_model(path)
        _LOADED[key] = (net, meta.extra, {"parameters": count_parameters(net), "macs": count_macs(net), "passes": 1})
    return _LOADED[key]


def network_inputs(inp: NowcastInputs, cfg) -> np.ndarray:
    from .model import build_inputs

    nwp_fine = None if inp.nwp is None else upsample(inp.nwp, inp.radar.shape[-1])
    return build_inputs(inp.radar, inp.satellite, nwp_fine, cfg)


def model(inp: NowcastInputs, n_leads: int, seed: int = 0, progress: Progress | None = None,
          path: Path = MODEL_FILE) -> Forecast:
    import torch

    from .model import exceedance_from_logits

    net, meta, costs = load_network(path)
    _check_network_input(inp, net.cfg)
    x = torch.from_numpy(network_inputs(inp, net.cfg))[None]
    clock = timed()
    with torch.no_grad():
        probs = exceedance_from_logits(net(x), net.cfg.n_leads)[0].numpy()
    secs = clock()
    cut = np.asarray(meta.get("csi_cutoffs")) if meta.get("csi_cutoffs") is not None else None
    k = list(net.cfg.thresholds).index(1.0)
    note = "" if inp.nwp is not None and inp.satellite is not None else "radar-only path (satellite/NWP flags off)"
    return Forecast("model", probs=probs[:n_leads], rain=_median_from_probs(probs[:n_leads], net.cfg.thresholds),
                    cutoffs=None if cut is None else cut[:n_leads], seconds=secs, note=note,
                    costs={**costs, "p_at_1mmh_mean": float(probs[:, k].mean())})


def unet(inp: NowcastInputs, n_leads: int, seed: int = 0, progress: Progress | None = None,
         path: Path = UNET_FILE) -> Forecast:
    import torch

    net, _, costs = load_network(path)
    _check_network_input(inp, net.cfg)
    x = torch.from_numpy(network_inputs(inp, net.cfg))[None]
    clock = timed()
    with torch.no_grad():
        out = net(x)[0].numpy()
    secs = clock()
    rain = np.expm1(2 * np.maximum(out, 0)).astype(np.float32)
    rain[rain < RAIN_THR_MMH] = 0.0
    return Forecast("unet", rain=rain[:n_leads], seconds=secs, costs=dict(costs))


def _check_network_input(inp: NowcastInputs, cfg) -> None:
    if inp.radar.shape[0] < cfg.n_radar or inp.radar.shape[-2:] != (cfg.size, cfg.size):
        raise InputError(f"The network needs {cfg.n_radar} radar frames of {cfg.size} x {cfg.size} px; got "
                         f"{inp.radar.shape}. Uploads are resampled to this grid first.")


def _median_from_probs(probs: np.ndarray, thresholds) -> np.ndarray:
    """A display field: the largest threshold whose exceedance probability is >= 0.5 (0 if none), (T, H, W) mm/h."""
    t = np.asarray((0.0,) + tuple(thresholds), np.float32)
    idx = (probs >= 0.5).sum(axis=1)  # monotone in k, so the count is the index of the last threshold passed
    return t[idx]


@dataclass(frozen=True)
class Method:
    """One nowcasting method: ``method(inp, n_leads, seed=, progress=) -> Forecast`` calls ``forecast``.

    ``needs_nwp``: it reads the NWP channel, so the radar-only path (uploads) skips it; ``members``: the ensemble size
    (0: a single forecast); ``weights``: the shipped network it loads, if any."""

    forecast: Callable[..., Forecast]
    needs_nwp: bool = False
    members: int = 0
    weights: Path | None = None

    def __call__(self, inp: NowcastInputs, n_leads: int, seed: int = 0, progress: Progress | None = None,
                 **kwargs: object) -> Forecast:
        return self.forecast(inp, n_leads, seed=seed, progress=progress, **kwargs)


METHODS: Registry[Method] = Registry("nowcasting method")
METHODS.add("model", Method(model, weights=MODEL_FILE), label="RainPro-8 mini (ours)", kind="ours", color="#d62728",
            about="the RainPro-8-style multi-source network (assets/nowcast_model.safetensors)")
METHODS.add("unet", Method(unet, weights=UNET_FILE), label="U-Net (MSE)", kind="baseline", color="#9467bd",
            about="deterministic U-Net, same backbone and inputs, trained with MSE")
METHODS.add("nwp", Method(nwp, needs_nwp=True), label="NWP channel", kind="reference", color="#8c564b",
            about="the NWP-like channel itself (hourly, coarse; linear in time, bilinear in space)")
METHODS.add("persistence", Method(persistence), label="Persistence", kind="baseline", color="#7f7f7f",
            about="pysteps eulerian: the last radar frame, unchanged")
METHODS.add("extrapolation", Method(extrapolation), label="LK extrapolation", kind="baseline", color="#1f77b4",
            about="pysteps Lucas-Kanade motion + semi-Lagrangian extrapolation")
METHODS.add("sprog", Method(sprog), label="S-PROG", kind="baseline", color="#17becf",
            about="pysteps S-PROG (cascade + AR(2) per level, Seed 2003)")
METHODS.add("steps", Method(steps, members=N_MEMBERS), label="STEPS (20)", kind="baseline", color="#2ca02c",
            about="pysteps STEPS ensemble (20 members; Bowler, Pierce and Seed 2006)")
METHODS.add("steps_blended", Method(steps_blended, needs_nwp=True, members=N_MEMBERS), label="Blended STEPS (20)",
            kind="baseline", color="#ff7f0e",
            about="pysteps blending.steps: STEPS blended with the NWP channel (Imhoff 2023)")
NEEDS_NWP: tuple[str, ...] = tuple(n for n, m in METHODS.items() if m.needs_nwp)
ENSEMBLES: tuple[str, ...] = tuple(n for n, m in METHODS.items() if m.members)

# The method of ``name`` (case-insensitive); an unknown name raises InputError listing the valid ones.
get_method = METHODS.get
