"""Nowcasting (RainPro-8 miniature): invariants of the synthetic world, the model's outputs, the pysteps baselines,
the verification scores, uploads and the CLI. The headline claims are in test_nowcast_claims.py."""

from __future__ import annotations

import argparse
import io
import json

import numpy as np
import pytest

from backend.errors import InputError
from backend.forecast.nowcast import io as pio
from backend.forecast.nowcast.baselines import METHODS, NowcastInputs, get_method
from backend.forecast.nowcast.synthetic import WorldConfig, make_case, make_cases, translation_sequence
from backend.forecast.nowcast.verify import (
    THRESHOLDS_MMH,
    Forecast,
    Scores,
    crps_exceedance,
    ensemble_exceedance,
    pysteps_quiet,
)


# --------------------------------------------------------------------------------------------- synthetic world
def test_case_is_seeded_and_shaped():
    a, b = make_case(7), make_case(7)
    cfg = WorldConfig()
    assert a.radar.shape == (cfg.n_inputs + cfg.n_leads, 64, 64)
    assert a.satellite.shape == (cfg.n_inputs, 64, 64) and a.nwp.shape == (9, 16, 16)
    np.testing.assert_array_equal(a.radar, b.radar)
    np.testing.assert_array_equal(a.nwp, b.nwp)
    assert a.radar.min() >= 0 and a.radar.max() <= cfg.rain_cap_mmh
    assert not np.array_equal(make_case(8).radar, a.radar)
    # cases of one episode are consecutive: case 1's inputs continue case 0's sequence
    c0, c1 = make_cases(11, 2, stride=4)
    np.testing.assert_array_equal(c0.radar[4:8], c1.radar[:4])


def test_satellite_sees_clouds_before_they_rain():
    """Among pixels dry at t0 (away from the border, where rain can also flow in), the satellite's coldness at t0
    separates those that rain 45 min later from those that stay dry (ROC area > 0.75; 0.5 = no signal)."""
    pre, dry = [], []
    for seed in range(40, 52):
        c = make_case(seed)
        now, later = c.radar[3], c.radar[6]
        cold = 290.0 - c.satellite[-1]
        inner = np.zeros(now.shape, bool)
        inner[4:-4, 4:-4] = True
        pre.append(cold[(now < 0.1) & (later >= 0.1) & inner])
        dry.append(cold[(now < 0.1) & (later < 0.1) & inner])
    pre, dry = np.concatenate(pre), np.concatenate(dry)
    assert pre.size > 200
    ranks = np.concatenate([pre, dry]).argsort().argsort() + 1.0
    auc = (ranks[: pre.size].sum() - pre.size * (pre.size + 1) / 2) / (pre.size * dry.size)
    assert auc > 0.75


def test_nwp_overtakes_extrapolation_after_the_first_hour():
    """The NWP channel's error statistics (fixed before training): weak at short leads, better than extrapolation at
    long leads (pooled CSI at 1 mm/h over 12 held-out cases)."""
    acc = {"extrapolation": Scores(32), "nwp": Scores(32)}
    for seed in range(30000, 30012):
        c = make_case(seed)
        inp = NowcastInputs.from_case(c)
        for name, s in acc.items():
            s.add(get_method(name)(inp, 32), c.truth)
    ext = np.asarray(acc["extrapolation"].summary()["csi"]["1.0"])
    nwp = np.asarray(acc["nwp"].summary()["csi"]["1.0"])
    assert ext[:4].mean() > nwp[:4].mean() + 0.1      # first hour: extrapolation wins
    assert nwp[20:].mean() > ext[20:].mean()          # hours 6-8: NWP wins


# --------------------------------------------------------------------------------------------------- the model
def test_exceedance_probabilities_are_monotone_and_bounded():
    torch = pytest.importorskip("torch")
    from backend.forecast.nowcast.model import exceedance_from_logits

    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 32 * 9, 8, 8, generator=g) * 5
    p = exceedance_from_logits(logits, 32)
    assert p.shape == (2, 32, 8, 8, 8)
    assert float(p.min()) >= 0 and float(p.max()) <= 1
    assert float((p[:, :, 1:] - p[:, :, :-1]).max()) <= 1e-6


def test_ordered_loss_matches_its_definition_and_has_gradients():
    torch = pytest.importorskip("torch")
    from backend.forecast.nowcast.model import NowcastConfig, exceedance_from_logits, ordered_loss
    from backend.forecast.nowcast.verify import bin_widths

    cfg = NowcastConfig(n_leads=2)
    g = torch.Generator().manual_seed(1)
    z = torch.randn(1, 2 * 9, 4, 4, generator=g, requires_grad=True)
    y = torch.rand(1, 2, 4, 4, generator=g) * 6
    loss, parts = ordered_loss(z, y, cfg)
    p = exceedance_from_logits(z, 2).detach().numpy()
    o = (y.numpy()[:, :, None] >= np.asarray(cfg.thresholds)[:, None, None]).astype(float)
    bce = -(o * np.log(p) + (1 - o) * np.log(1 - p)).sum(2).mean()
    crps = (((p - o) ** 2) * bin_widths(cfg.thresholds)[:, None, None]).sum(2).mean()
    assert parts["bce"] == pytest.approx(bce, rel=1e-4) and parts["crps"] == pytest.approx(crps, rel=1e-4)
    loss.backward()
    assert z.grad is not None and torch.isfinite(z.grad).all()


def test_network_costs_and_roundtrip(tmp_path):
    torch = pytest.importorskip("torch")
    from backend.forecast.nowcast.model import (
        NowcastConfig,
        NowcastNet,
        count_macs,
        count_parameters,
        load_model,
        save_model,
    )

    net = NowcastNet(NowcastConfig())
    assert 0.3e6 < count_parameters(net) < 2e6  # "on the order of 1M parameters"
    assert count_macs(net) > 1e8
    path = tmp_path / "m.safetensors"
    save_model(net, path, data_seeds={"train_episodes": "none"}, extra={"csi_cutoffs": [[0.5]]})
    net2, meta = load_model(path)
    x = torch.randn(1, net.cfg.in_channels, 64, 64)
    net.eval()
    with torch.no_grad():
        np.testing.assert_allclose(net(x).numpy(), net2(x).numpy(), atol=1e-5)
    assert meta.extra["csi_cutoffs"] == [[0.5]] and meta.config == net.cfg.to_dict()
    assert meta.command == "python -m backend.train nowcast" and meta.data_seeds == {"train_episodes": "none"}


@pytest.fixture(scope="module")
def shipped():
    from backend.forecast.nowcast.baselines import MODEL_FILE

    if not MODEL_FILE.is_file():
        pytest.skip("assets/nowcast_model.safetensors not trained yet")
    return MODEL_FILE


def test_shipped_model_outputs_are_consistent_probabilities(shipped):
    c = make_case(20100)
    fc = get_method("model")(NowcastInputs.from_case(c), 32)
    p = fc.probs
    assert p.shape == (32, len(THRESHOLDS_MMH), 64, 64)
    assert p.min() >= 0 and p.max() <= 1
    assert (np.diff(p, axis=1) <= 1e-6).all()
    # radar-only path (uploads): satellite and NWP flags off, still valid probabilities
    only = get_method("model")(NowcastInputs(c.inputs), 32)
    assert only.probs.shape == p.shape and (np.diff(only.probs, axis=1) <= 1e-6).all()
    assert "radar-only" in only.note


# ------------------------------------------------------------------------------------------ pysteps baselines
def test_registry_lists_names_and_shares_a_signature():
    import inspect

    with pytest.raises(ValueError, match="Valid names: model, unet, nwp"):
        get_method("dgmr")
    assert get_method("STEPS") is METHODS["steps"]
    for fn in METHODS.values():
        assert list(inspect.signature(fn).parameters)[:4] == ["inp", "n_leads", "seed", "progress"]


def test_extrapolation_reproduces_a_pure_translation():
    """A rigid shift of (dy, dx) = (1, 2) px per step: LK recovers it, extrapolation reproduces the shifted field in
    the interior, and beats persistence by at least 0.1 CSI from lead 2 on."""
    seq = translation_sequence((64, 64), (1.0, 2.0), n_frames=10, seed=3)
    inp = NowcastInputs(seq[:4])
    ext = get_method("extrapolation")(inp, 6)
    per = get_method("persistence")(inp, 6)
    inner = (slice(16, 48), slice(16, 48))
    u, v = ext.motion[0][inner], ext.motion[1][inner]
    assert abs(np.median(u) - 2.0) < 0.1 and abs(np.median(v) - 1.0) < 0.1
    truth = seq[4:]
    for lead in range(6):
        a, b = ext.rain[lead][inner], truth[lead][inner]
        assert np.corrcoef(a.ravel(), b.ravel())[0, 1] > 0.95
    s_e, s_p = Scores(6), Scores(6)
    s_e.add(ext, truth)
    s_p.add(per, truth)
    csi_e, csi_p = np.asarray(s_e.summary()["csi"]["1.0"]), np.asarray(s_p.summary()["csi"]["1.0"])
    assert (csi_e[1:] >= csi_p[1:] + 0.1).all()


def test_motion_needs_enough_frames_and_dry_inputs_give_no_rain():
    with pytest.raises(InputError, match="at least 3 radar frames"):
        get_method("extrapolation")(NowcastInputs(np.ones((2, 64, 64), np.float32)), 4)
    dry = get_method("steps")(NowcastInputs(np.zeros((4, 64, 64), np.float32)), 4)
    assert dry.ensemble.shape == (20, 4, 64, 64) and not dry.ensemble.any() and "no rain" in dry.note
    with pytest.raises(InputError, match="NWP"):
        get_method("steps_blended")(NowcastInputs(np.ones((4, 64, 64), np.float32)), 4)


def test_cascade_methods_lower_their_ar_order_when_earlier_frames_are_dry():
    """Rain that only appears in the last frame(s): S-PROG falls back to extrapolation (one wet frame) or fits AR(1)
    (two wet frames), STEPS fits AR(1); each says so in its note instead of failing inside pysteps."""
    from backend.forecast.nowcast.baselines import _ar_order

    seq = translation_sequence((64, 64), (1.0, 2.0), n_frames=4, seed=3)
    assert _ar_order(seq) == 2
    one, two = seq.copy(), seq.copy()
    one[:3] = 0.0
    two[:2] = 0.0
    assert _ar_order(one) == 0 and _ar_order(two) == 1
    s1 = get_method("sprog")(NowcastInputs(one), 4)
    assert "falls back to extrapolation" in s1.note and np.isfinite(s1.rain).all()
    s2 = get_method("sprog")(NowcastInputs(two), 4)
    assert s2.rain.shape == (4, 64, 64) and np.isfinite(s2.rain).all()
    assert "AR(1)" in s2.note or "could not fit" in s2.note
    st = get_method("steps")(NowcastInputs(two), 3, n_members=2)
    assert st.ensemble.shape == (2, 3, 64, 64) and "AR(1)" in st.note


# ------------------------------------------------------------------------------------------------ verification
def test_perfect_forecast_scores():
    c = make_case(21)
    s = Scores(32)
    s.add(Forecast("truth", rain=c.truth), c.truth)
    out = s.summary()
    assert np.allclose(out["crps"], 0) and np.allclose(out["brier"], 0)
    for thr, csi in out["csi"].items():
        events = [(c.truth[t] >= float(thr)).any() for t in range(32)]
        assert all(v == 1.0 for v, e in zip(csi, events) if e)
    for thr, by_scale in out["fss"].items():
        for vals in by_scale.values():
            events = [(c.truth[t] >= float(thr)).any() for t in range(32)]
            assert all(v == pytest.approx(1.0) for v, e in zip(vals, events) if e)


def test_threshold_crps_matches_pysteps_crps_for_a_fine_ladder():
    """The threshold-integrated Brier CRPS of a deterministic forecast tends to pysteps probscores.CRPS (= MAE)."""
    ps = pysteps_quiet()
    from pysteps.verification import probscores

    _ = ps
    rng = np.random.default_rng(0)
    obs = np.clip(rng.gamma(0.6, 3.0, (32, 32)), 0, 19.9)
    fc = np.clip(obs * rng.lognormal(0, 0.4, obs.shape), 0, 19.9)
    ladder = tuple(np.arange(0.005, 20.0, 0.01))
    ours = crps_exceedance(
        (fc[None, :, :] >= np.asarray(ladder)[:, None, None]).astype(np.float32)[None], obs[None], ladder)
    ref = probscores.CRPS(fc[None], obs)
    assert ours == pytest.approx(ref, rel=0.02, abs=0.005)


def test_ensemble_crps_is_at_most_the_mean_member_crps():
    rng = np.random.default_rng(1)
    obs = rng.gamma(0.5, 3.0, (4, 32, 32)).astype(np.float32)
    members = (obs[None] * rng.lognormal(0, 0.6, (12, 4, 32, 32))).astype(np.float32)
    ens = crps_exceedance(ensemble_exceedance(members), obs)
    single = np.mean([crps_exceedance(ensemble_exceedance(members[i:i + 1]), obs) for i in range(12)])
    assert ens <= single


def test_rank_histogram_of_an_exchangeable_ensemble_is_flat():
    from scipy.stats import chisquare

    rng = np.random.default_rng(2)
    shape = (10, 8, 32, 32)  # members, leads, y, x: observation and members drawn from one distribution
    draw = rng.gamma(1.0, 2.0, (shape[0] + 1,) + shape[1:]).astype(np.float32)
    fc = Forecast("ens", rain=draw[1:].mean(0), probs=ensemble_exceedance(draw[1:]), ensemble=draw[1:])
    s = Scores(8)
    s.add(fc, draw[0])
    hist = np.asarray(s.summary()["rank_histogram"])
    n = 2 * 32 * 32  # leads 0 and 4 are accumulated
    assert chisquare(hist * n).pvalue > 0.01


# ------------------------------------------------------------------------------------------------- bad input
def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


@pytest.mark.parametrize("arrays,match", [
    ({"precip": np.zeros((4, 64)), "timestep_min": 5}, "rank 3"),
    ({"precip": np.full((4, 32, 32), np.nan), "timestep_min": 5}, "NaN"),
    ({"precip": -np.ones((4, 32, 32)), "timestep_min": 5}, "negative"),
    ({"precip": np.zeros((4, 32, 32)), "times_min": np.array([0, 5, 10, 20.0])}, "mismatched time steps"),
    ({"precip": np.zeros((2, 32, 32)), "timestep_min": 5}, "at least 3"),
    ({"precip": np.full((4, 32, 32), 900.0), "timestep_min": 5}, "not physical"),
    ({"other": np.zeros((4, 32, 32))}, "no `precip`"),
])
def test_bad_uploads_give_clear_messages(arrays, match):
    with pytest.raises(InputError, match=match):
        pio.load_radar(_npz(**arrays), "bad.npz")


def test_upload_caps_and_formats():
    with pytest.raises(InputError, match="limit is 20 MB"):
        pio.load_radar(b"0" * (pio.MAX_BYTES + 1), "big.npz")
    with pytest.raises(InputError, match="NetCDF-4/HDF5"):
        pio.load_radar(b"\x89HDF\r\n\x1a\n" + bytes(64), "x.nc")
    with pytest.raises(InputError, match="not NPZ"):
        pio.load_radar(b"hello world", "x.npz")
    buf = io.BytesIO()
    np.savez(buf, precip=np.array([object()], dtype=object))
    with pytest.raises(InputError):
        pio.load_radar(buf.getvalue(), "pickle.npz")
    # 5-minute frames too short once resampled to 15 minutes
    seq = pio.load_radar(_npz(precip=np.ones((4, 32, 32)), timestep_min=5.0), "short.npz")
    with pytest.raises(InputError, match="needs 3"):
        pio.to_model_grid(seq)


def test_upload_is_resampled_to_the_model_grid_and_runs_radar_only(tmp_path):
    from scipy.io import netcdf_file

    rain = np.clip(translation_sequence((100, 120), (0.5, 1.0), n_frames=13, seed=5), 0, 100)
    path = tmp_path / "r.nc"
    with netcdf_file(path, "w") as nc:
        nc.createDimension("time", 13)
        nc.createDimension("y", 100)
        nc.createDimension("x", 120)
        t = nc.createVariable("time", "f4", ("time",))
        t[:] = np.arange(13) * 5.0
        v = nc.createVariable("precip", "f4", ("time", "y", "x"))
        v[:] = rain
        v.units = "mm/h"
        nc.pixel_km = 2.0
    seq = pio.to_model_grid(pio.load_radar(path.read_bytes(), "r.nc"))
    assert seq.frames.shape == (5, 64, 64) and seq.timestep_min == 15.0
    assert seq.pixel_km == pytest.approx(2.0 * 100 / 64)
    assert any("centre-cropped" in n for n in seq.notes) and any("interpolated" in n for n in seq.notes)
    from backend.forecast.nowcast.pipeline import run_nowcast

    x, truth = pio.split_sequence(seq.frames, 4)
    run = run_nowcast(NowcastInputs(x, pixel_km=seq.pixel_km), ["persistence", "extrapolation", "nwp"], 8,
                      truth=truth)
    assert "nwp" in run.skipped and set(run.forecasts) == {"persistence", "extrapolation"}
    assert run.n_leads == 1 and run.scores["extrapolation"]["cases"] == 1


def test_forecast_exports_roundtrip(tmp_path):
    from scipy.io import netcdf_file

    from backend.forecast.nowcast.pipeline import run_case

    _, run = run_case(5, ["persistence", "nwp"], 8)
    z = np.load(io.BytesIO(pio.forecast_npz(run)), allow_pickle=False)
    assert z["persistence_rain"].shape == (8, 64, 64) and z["truth"].shape == (8, 64, 64)
    path = tmp_path / "f.nc"
    path.write_bytes(pio.forecast_netcdf(run))
    with netcdf_file(path, "r", mmap=False) as nc:
        assert nc.variables["nwp_rain"].shape == (8, 64, 64)


# ------------------------------------------------------------------------------------------------------- CLI
def _cli(argv: list[str]) -> int:
    """Run one action's handler (an InputError propagates) and print its result the one way."""
    from backend.cli_common import finish
    from backend.forecast.nowcast import cli

    ap = argparse.ArgumentParser()
    cli.add_parser(ap.add_subparsers(dest="group"))
    args = ap.parse_args(argv)
    return finish(args, args.func.handler(args))


def test_cli_run_and_evaluate(tmp_path, capsys):
    out = tmp_path / "fc.npz"
    assert _cli(["nowcast", "run", "--case", "seed=3", "--method", "extrapolation,nwp", "--leads", "8", "--out",
                 str(out), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["methods"] == ["extrapolation", "nwp"] and rep["leads"] == 8 and out.is_file()
    assert rep["provenance"]["params"]["case_seed"] == 3
    up = tmp_path / "radar.npz"
    up.write_bytes(pio.example_npz(3, 8))
    assert _cli(["nowcast", "run", "--input", str(up), "--method", "persistence", "--leads", "4", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["source"] == {"input": "radar.npz"} and "radar-only path" in " ".join(rep["notes"])
    assert _cli(["nowcast", "evaluate", "--cases", "1", "--method", "persistence,nwp", "--leads", "4", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert set(rep["summaries"]) == {"persistence", "nwp"} and rep["seeds"] == [20000]
    with pytest.raises(InputError, match="seed=3"):
        _cli(["nowcast", "run", "--case", "three"])
    with pytest.raises(InputError, match="Valid names"):
        _cli(["nowcast", "run", "--method", "dgmr"])
    with pytest.raises(InputError, match=">= 20000"):
        _cli(["nowcast", "evaluate", "--start", "1000"])
