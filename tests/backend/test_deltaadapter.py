"""delta-Adapter invariants (spec ``delta-adapter.md``): bounded edits, a bit-identical frozen backbone with gradients
flowing through it, zero-init = identity (our option), monotone QC quantiles, the conformal ranks and mapie's
intervals, the synthetic shift as documented, and bad input refused with clear messages."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.forecast.deltaadapter import adapters as ad
from backend.forecast.deltaadapter import backbones as bb
from backend.forecast.deltaadapter import calibration as cal
from backend.forecast.deltaadapter import data as dt

L, D, H = 24, 3, 6


def _backbone(kind: str = "dlinear") -> torch.nn.Module:
    torch.manual_seed(0)
    return bb.freeze(bb.build(bb.config_for(kind, L, H, D)))


def _xy(n: int = 64, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, L, D, generator=g), torch.randn(n, H, 1, generator=g)


@pytest.mark.parametrize("kind", ["add", "mul"])
@pytest.mark.parametrize("delta", [0.01, 0.1, 0.5])
def test_edits_are_bounded_by_delta(kind: str, delta: float) -> None:
    x, _ = _xy()
    model = ad.DeltaAdapter(_backbone(), L, D, H, 1, ad.AdapterConfig(mode="xy", kind=kind, delta=delta))
    with torch.no_grad():
        for m in model.adapters():  # large weights drive tanh to its limits
            m.fc3.weight.mul_(100.0)
        xt = model.nudge(x)
        y0 = model.backbone(xt)
        yt = model.correct(y0)
    eps = 1e-6
    if kind == "add":
        assert (xt - x).abs().max() <= delta + eps and (yt - y0).abs().max() <= delta + eps
    else:
        rx, ry = xt / x, yt / y0
        assert rx.min() >= 1 - delta - eps and rx.max() <= 1 + delta + eps
        assert ry.min() >= 1 - delta - eps and ry.max() <= 1 + delta + eps
    assert (xt - x).abs().max() > 0.5 * delta * (1 if kind == "add" else 0.1)  # the bound is reached, not idle


@pytest.mark.parametrize("backbone", ["dlinear", "patchtst", "mlp"])
def test_backbone_bit_identical_gradients_flow_and_count(backbone: str) -> None:
    net = _backbone(backbone)
    before = bb.state_hash(net)
    x, y = _xy(96)
    cfg = ad.AdapterConfig(fit=ad.FitConfig(epochs=2, batch=32, patience=5))
    model, log = ad.train_adapter(net, x[:64], y[:64], x[64:], y[64:], cfg)
    assert bb.state_hash(net) == before and all(not p.requires_grad for p in net.parameters())
    assert ad.adapter_params(model) == sum(p.numel() for m in model.adapters() for p in m.parameters())
    assert not set(map(id, model.trainable())) & set(map(id, net.parameters()))
    model.train()
    loss = torch.nn.functional.mse_loss(model(x[:8]), y[:8])
    loss.backward()
    assert model.a_in.fc1.weight.grad is not None and model.a_in.fc1.weight.grad.abs().sum() > 0  # through F
    assert all(p.grad is None for p in net.parameters())
    assert log.epochs_run == 2


@pytest.mark.parametrize("mode", ["x", "y", "xy"])
@pytest.mark.parametrize("kind", ["add", "mul"])
def test_zero_init_is_the_identity(mode: str, kind: str) -> None:
    net = _backbone("mlp")
    x, _ = _xy()
    model = ad.DeltaAdapter(net, L, D, H, 1, ad.AdapterConfig(mode=mode, kind=kind, zero_init=True)).eval()
    with torch.no_grad():
        assert torch.equal(model(x), net(x))
    plain = ad.DeltaAdapter(net, L, D, H, 1, ad.AdapterConfig(mode=mode, kind=kind)).eval()
    with torch.no_grad():  # the paper's init starts near, not at, the identity
        assert not torch.equal(plain(x), net(x))


def test_adapter_config_refuses_bad_values() -> None:
    with pytest.raises(InputError, match="delta"):
        ad.AdapterConfig(delta=0.0).check()
    with pytest.raises(InputError, match="delta"):
        ad.AdapterConfig(delta=1.5).check()
    with pytest.raises(InputError, match="mode"):
        ad.AdapterConfig(mode="z").check()
    with pytest.raises(InputError, match="kappa"):
        ad.FeatureMask(_backbone(), L, D, ad.MaskConfig(kappa=1.0))


def test_mask_is_relaxed_in_training_and_hard_in_eval() -> None:
    m = ad.FeatureMask(_backbone(), L, D)
    x, _ = _xy(8)
    m.train()
    soft = m.mask(x)
    assert soft.shape == x.shape and ((soft > 0) & (soft < 1)).float().mean() > 0.9
    m.eval()
    hard = m.mask(x)
    assert set(hard.unique().tolist()) <= {0.0, 1.0}


def test_qc_quantiles_are_monotone_and_median_is_bounded() -> None:
    x, y = _xy(32)
    yhat = torch.randn(32, H, 1)
    qc = cal.QuantileCalibrator(D, H, 1)
    with torch.no_grad():
        for p in qc.parameters():
            p.normal_(0, 3.0)
        q = qc(x, yhat)
    assert q.shape == (32, H, 1, len(cal.TAUS))
    assert (q.diff(dim=-1) >= 0).all()
    assert (q[..., qc.anchor] - yhat).abs().max() <= 0.1 + 1e-6


def test_cc_scale_starts_near_069_and_is_positive() -> None:
    x, _ = _xy(8)
    net = cal.ConformalScaleNet(D, H)
    with torch.no_grad():
        w = net(x, torch.randn(8, H, 1))
    assert torch.allclose(w, torch.full_like(w, float(np.log(2)) + 1e-3), atol=1e-6)


def test_conformal_rank_and_plain_quantile() -> None:
    s = np.arange(1, 101, dtype=float)  # n = 100
    assert cal.conformal_kappa(s, 0.05) == 96.0  # ceil(101 * 0.95) = 96th smallest
    assert cal.conformal_kappa(s, 0.05, "plain") == pytest.approx(np.quantile(s, 0.95))
    assert cal.conformal_kappa(s[:10], 0.05) == np.inf  # ceil(11 * 0.95) = 11 > 10


def test_split_conformal_equals_mapie() -> None:
    rng = np.random.default_rng(0)
    pc, pt = rng.normal(size=(300, H, 1)), rng.normal(size=(200, H, 1))
    yc = pc + rng.normal(size=pc.shape) * (1 + np.abs(pc))
    for alpha in (0.05, 0.1, 0.2):
        ours = cal.split_conformal(yc - pc, pt, alpha)
        lo, hi = cal.mapie_split_conformal(pc, yc, pt, alpha)
        assert np.abs(ours.lo - lo).max() < 1e-6 and np.abs(ours.hi - hi).max() < 1e-6


def test_aci_reacts_to_misses() -> None:
    rng = np.random.default_rng(1)
    res_cal = rng.normal(size=(200, H, 1))
    pred = np.zeros((300, H, 1))
    y = rng.normal(size=pred.shape) * 2.0  # the test noise is twice the calibration noise
    iv, levels = cal.aci(res_cal, pred, y, 0.1, gamma=0.01)
    assert levels[-1] < levels[0] and iv.hi[-1, 0, 0] > iv.hi[0, 0, 0]


def test_synthetic_shift_is_the_documented_one() -> None:
    s = dt.synthetic()
    assert s.values.shape[1] == 6 and s.planted.shape == (96, 6) and s.noise_scale is not None
    assert dt.SHIFT == {"daily_amplitude": (1.0, 1.3), "lead_coef": (0.8, 1.1), "level": (0.0, 0.3)}
    v = s.values[:, 0]
    k = s.shift_at
    assert v[k:].mean() - v[:k].mean() == pytest.approx(0.3, abs=0.15)
    assert dt.synthetic().values.tobytes() == s.values.tobytes()  # fixed seed
    w = dt.make_windows(s)
    assert w.x["test"].shape[1:] == (96, 6) and w.y["test"].shape[1:] == (24, 1)
    assert w.t0["adapt"][0] == k and w.t0["test"][-1] + 24 == len(s.values)
    assert abs(w.x["early"].mean()) < 0.1  # standardised by the early segment


def test_real_series_ship_and_are_long_enough() -> None:
    for s in (dt.co2(), dt.macro()):
        assert len(s.values) >= dt.min_length(s.lookback, s.horizon)
        w = dt.make_windows(s)
        assert all(len(w.x[k]) >= 2 for k in ("early", "adapt", "val", "test"))
    assert len(dt.co2().values) == 2284


def _csv(rows: list[str]) -> bytes:
    return ("\n".join(rows) + "\n").encode()


def test_csv_bad_input_messages() -> None:
    from backend.forecast.deltaadapter.inputs import multiseries

    good = dt.to_csv_bytes(dt.read_csv(multiseries()))
    lines = good.decode().splitlines()
    assert dt.read_csv(good).values.shape == (180, 3)
    missing = lines[:5] + [lines[5].rsplit(",", 1)[0] + ","] + lines[6:]
    with pytest.raises(InputError, match="missing value"):
        dt.read_csv(_csv(missing))
    text = lines[:5] + [lines[5].rsplit(",", 1)[0] + ",abc"] + lines[6:]
    with pytest.raises(InputError, match="non-numeric"):
        dt.read_csv(_csv(text))
    with pytest.raises(InputError, match="at least 180"):
        dt.read_csv(_csv(lines[:100]))
    const = [ln.rsplit(",", 1)[0] + ",1.0" for ln in lines[1:]]
    with pytest.raises(InputError, match="constant"):
        dt.read_csv(_csv([lines[0]] + const))
    with pytest.raises(InputError, match="increasing"):
        dt.read_csv(_csv([lines[0]] + lines[1:][::-1]))
    with pytest.raises(InputError, match="horizon"):
        dt.read_csv(good, horizon=500)


@pytest.mark.parametrize("data", [b"\r\x00", b"\x00\r", b"\r\x00\n", b"time,a\r\x00\n"])
def test_csv_with_a_nul_byte_is_refused_with_an_input_error(data: bytes) -> None:
    """A carriage return beside a NUL byte (the decoder's registry entry, with and without the page's options)."""
    from backend.io.registry import decode

    for options in ({}, {"lookback": 24, "horizon": 6}):
        with pytest.raises(InputError, match="looks binary .*Upload a UTF-8 CSV") as err:
            decode("multiseries", data, name="s.csv", **options)
        assert type(err.value) is InputError


def test_user_backbone_of_another_shape_is_refused() -> None:
    from safetensors.torch import load, save

    state = load(save({k: v.contiguous() for k, v in _backbone("dlinear").state_dict().items()}))
    assert isinstance(bb.load_user(state, "dlinear", L, H, D), bb.DLinear)
    with pytest.raises(InputError, match="needs"):
        bb.load_user(state, "dlinear", L, H + 1, D)
    with pytest.raises(InputError, match="not a mlp backbone"):
        bb.load_user(state, "mlp", L, H, D)
    with pytest.raises(InputError, match="safetensors"):
        bb.read_state(b"\x00" * 64)


def test_cli_refuses_bad_arguments(tmp_path, capsys) -> None:
    from backend.__main__ import main

    for argv in (["run", "--data", "macro", "--delta", "2"], ["calibrate", "--data", "macro", "--alpha", "0.7"],
                 ["run", "--data", str(tmp_path / "none.csv")], ["run", "--data", "macro", "--backbone", "lstm"]):
        assert main(["deltaadapter", *argv, "--json"]) == 2
        assert '"error"' in capsys.readouterr().out
    csv = tmp_path / "s.csv"
    csv.write_bytes(dt.to_csv_bytes(dt.macro()))
    assert main(["deltaadapter", "run", "--data", str(csv), "--lookback", "16", "--horizon", "400", "--json"]) == 2
    assert "horizon" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == [csv]  # nothing written


def _dst_csv(offsets: bool = True) -> bytes:
    """An hourly series in Europe/Berlin across the spring and autumn daylight-saving changes (offsets +01:00 and
    +02:00 in the stamps; the local clock skips an hour in March and repeats one in October)."""
    import pandas as pd

    t = pd.date_range("2024-03-28", "2024-11-02", freq="h", tz="Europe/Berlin")
    h = np.arange(len(t))
    y = np.sin(2 * np.pi * h / 24) + 0.01 * h
    x = np.cos(2 * np.pi * h / 24 + 0.3)
    stamps = [s.isoformat() if offsets else s.tz_localize(None).isoformat() for s in t]
    return _csv(["time,load,temp"] + [f"{a},{b:.4f},{c:.4f}" for a, b, c in zip(stamps, y, x, strict=True)])


def test_a_daylight_saving_series_with_offsets_reads_on_one_utc_axis() -> None:
    data = _dst_csv()
    s = dt.read_csv(data, lookback=24, horizon=6)
    assert s.values.shape == (data.count(b"\n") - 1, 2)
    assert "+01:00, +02:00" in s.about and "UTC" in s.about
    with pytest.raises(InputError, match="strictly increasing"):  # without offsets the October hour repeats
        dt.read_csv(_dst_csv(offsets=False))


def test_time_axis_parses_offsets_naive_stamps_and_numbers() -> None:
    from backend.io.timeaxis import parse_time_column

    ax = parse_time_column(["2024-10-27T02:30:00+02:00", "2024-10-27T02:30:00+01:00", "2024-10-27T02:30:00Z"])
    assert ax.kind == "datetime" and ax.zones == ("+02:00", "+01:00", "+00:00")
    assert np.diff(ax.order).tolist() == [3600.0, 3600.0]
    assert ax.utc[0].startswith("2024-10-27T00:30:00")
    mixed = parse_time_column(["2024-01-01 00:00", "2024-01-01T02:00:00+01:00"])
    assert "without an offset were read as UTC" in mixed.note and np.diff(mixed.order).tolist() == [3600.0]
    assert parse_time_column(["3", "5.5"]).kind == "numeric"
    with pytest.raises(InputError, match=r"'not a date' \(line 3\)"):
        parse_time_column(["2024-01-01", "not a date"], "when")
    with pytest.raises(InputError, match="missing"):
        parse_time_column(["2024-01-01", None])


def test_a_backbone_trained_on_a_users_series_is_reused_not_retrained() -> None:
    from backend.forecast.deltaadapter import jobs

    series = dt.read_csv(dt.to_csv_bytes(dt.macro()), lookback=16, horizon=4)
    jobs._TRAINED.clear()
    a = jobs.frozen_backbone(series, "dlinear")
    b = jobs.frozen_backbone(series, "dlinear")
    assert len(jobs._TRAINED) == 1 and a.model is not b.model  # one training, a fresh copy per job
    for p, q in zip(a.model.parameters(), b.model.parameters(), strict=True):
        assert torch.equal(p, q)
    other = dt.read_csv(dt.to_csv_bytes(dt.macro()), lookback=16, horizon=4, shift_fraction=0.6)
    jobs.frozen_backbone(other, "dlinear")
    assert len(jobs._TRAINED) == 2  # another shift position is another early regime


@pytest.mark.parametrize("backbone", ["dlinear", "patchtst", "mlp"])
def test_adapted_forecast_stays_within_the_o_delta_drift_bound(backbone: str) -> None:
    """Adapters with random (untrained, not zero-initialised) weights: the bound holds for any weights, so this checks
    the bounded edits and the backbone's Lipschitz behaviour, not what training found."""
    from backend.forecast.deltaadapter import adapters as ad
    from backend.forecast.deltaadapter import backbones as bb

    model_f, _ = bb.load_shipped("synthetic", backbone)
    w = dt.make_windows(dt.synthetic())
    x = torch.from_numpy(w.x["test"][:: max(1, len(w.x["test"]) // 6)][:6])  # six windows across the test split
    ratios = []
    for kind in ("add", "mul"):
        for delta in (0.01, 0.05, 0.2):
            torch.manual_seed(0)
            m = ad.DeltaAdapter(model_f, *w.x["test"].shape[1:], w.y["test"].shape[1], 1,
                                ad.AdapterConfig(mode="xy", kind=kind, delta=delta))
            r = ad.drift_bound(m, x, points=4)
            assert (r["drift"] <= r["bound"] * (1 + 1e-4) + 1e-6).all(), (kind, delta, r["drift"], r["bound"])
            assert (r["bound"] <= r["apriori"] * (1 + 1e-4) + 1e-6).all()
            if kind == "add":
                ratios.append(float(r["drift"].max()) / delta)
    assert max(ratios) < 3 * min(ratios)  # drift grows in proportion to delta: O(delta)


def test_own_forecasts_without_a_backbone() -> None:
    """A damped, offset forecaster (the example table): the linear recalibration and Ada-Y both lower its test MSE,
    Ada-Y's edit stays within delta, and the intervals are scored on the later test windows."""
    from backend.forecast.deltaadapter import jobs
    from backend.forecast.deltaadapter.inputs import forecast_table
    from backend.forecast.deltaadapter.own import OwnConfig, read_forecasts, windows

    table = read_forecasts(forecast_table(rows=400))
    w = windows(table, 24)
    assert [len(w[k][0]) for k in ("adapt", "val", "test")] == [188, 75, 113]
    assert w["adapt"][0].shape == (188, 24, 2) and w["test"][1].shape == (113, 1, 1)
    res = jobs.run_own(table, OwnConfig(delta=0.1))
    p = res.points
    assert p["linear"]["mse"] < p["forecast"]["mse"] and p["ada_y"]["mse"] < p["forecast"]["mse"]
    m, s = w["scale"]
    edit = np.abs(np.asarray(res.example["ada_y"]) - np.asarray(res.example["forecast"])) / s
    assert edit.max() <= 0.1 + 1e-5  # the bounded correction, in standardised units
    for v in res.intervals.values():
        assert 0 <= v["interval"][0] <= v["coverage"] <= v["interval"][1] <= 1 and v["width"] > 0


def test_forecast_table_bad_input() -> None:
    from backend.forecast.deltaadapter.inputs import forecast_table
    from backend.forecast.deltaadapter.own import OwnConfig, read_forecasts

    lines = forecast_table(rows=200).decode().splitlines()
    with pytest.raises(InputError, match="at least 120"):
        read_forecasts(("\n".join(lines[:50]) + "\n").encode())
    with pytest.raises(InputError, match="non-numeric"):
        read_forecasts(("\n".join(lines[:5] + [lines[5].rsplit(",", 2)[0] + ",x,1"] + lines[6:]) + "\n").encode())
    with pytest.raises(InputError, match="needs a time column"):
        read_forecasts(b"a,b\n" + b"1,2\n" * 130)
    with pytest.raises(InputError, match="strictly increasing"):
        read_forecasts(("\n".join([lines[0]] + lines[1:][::-1]) + "\n").encode())
    with pytest.raises(InputError, match="alpha"):
        OwnConfig(alpha=0.7)
