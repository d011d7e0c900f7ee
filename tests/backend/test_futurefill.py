"""FutureFill (backend/generation/futurefill/): exactness of every engine, the binary-carry schedule, the cost model
and its growth claim, prompted generation's cache, the spectral filters, uploads and the CLI.

Claims checked here:
- continuous and epoched outputs equal naive online convolution to 1e-10 in float64 for lengths up to 2^14;
- counted multiply-adds grow by about 2.2-2.5x per doubling of length (continuous) vs 4x (naive).
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.errors import InputError
from backend.generation.futurefill import futurefill as ff
from tests.cli_json import run_cli_json


def _coverage(events: list[ff.FillEvent], T: int) -> np.ndarray:
    """count[i, j] = how many FFT calls added input i's contribution to output j."""
    count = np.zeros((T, T), dtype=int)
    for e in events:
        count[e.src[0] : e.src[1], e.dst[0] : e.dst[1]] += 1
    return count


# ------------------------------------------------------------------------------------------------ primitive, engines
def test_futurefill_primitive_equals_linear_convolution() -> None:
    rng = np.random.default_rng(0)
    for m, n_future in [(1, 1), (3, 5), (8, 8), (13, 2), (64, 100)]:
        v = rng.standard_normal(m)
        w = rng.standard_normal((3, m + n_future))
        got = ff.futurefill(v, w, n_future)
        want = np.stack([np.convolve(v, w[k])[m : m + n_future] for k in range(3)])
        assert np.max(np.abs(got - want)) < 1e-12


@pytest.mark.parametrize("method,kw", [
    ("naive", {}),
    ("continuous", {}),
    ("continuous", {"direct_below": 8}),
    ("epoched", {}),
    ("epoched", {"epoch": 1}),
    ("epoched", {"epoch": 7}),
    ("epoched", {"epoch": 1000}),
])
def test_engines_equal_offline_convolution(method: str, kw: dict) -> None:
    rng = np.random.default_rng(1)
    T = 777
    phi = ff.random_filters(T, 3, seed=2)
    u = rng.standard_normal(T)
    out, _ = ff.online_convolve(u, phi, method, **kw)
    ref = np.stack([np.convolve(u, phi[k])[:T] for k in range(3)])
    assert np.max(np.abs(out - ref)) < 1e-11


def test_binary_carry_fills_each_pair_exactly_once() -> None:
    """Every (input i, output j > i) pair is FutureFilled by exactly one FFT call, before step j; none with j <= i."""
    T = 64
    _, eng = ff.online_convolve(np.ones(T), ff.random_filters(T, 1), "continuous", record=True)
    count = _coverage(eng.events, T)
    i, j = np.indices((T, T))
    assert np.all(count[j > i] == 1)
    assert np.all(count[j <= i] == 0)
    # the pattern: the call after the t-th input covers the last lowbit(t) inputs, into the next lowbit(t) slots
    for e in eng.events:
        m = e.step & -e.step
        assert e.src == (e.step - m, e.step) and e.dst == (e.step, e.step + m)
    # every slot j is complete when its output is produced (all fills into j happen at steps <= j)
    assert all(e.step <= e.dst[0] for e in eng.events)


def test_epoched_refills_cover_history() -> None:
    T, K = 50, 8
    _, eng = ff.online_convolve(np.ones(T), ff.random_filters(T, 1), "epoched", epoch=K, record=True)
    assert [e.step for e in eng.events] == list(range(K, T, K))
    assert all(e.src == (0, e.step) for e in eng.events)


# ----------------------------------------------------------------------------------------------- generation claims
def test_claim_all_methods_equal_naive_at_2_14(record_claim) -> None:
    """Claim: continuous and epoched (and prompted) equal naive to 1e-10 in float64 at L = 2^14."""
    T = 1 << 14
    model = ff.make_model(T, n_filters=8, kind="spectral", seed=0)
    prompt = np.random.default_rng(3).standard_normal(64)
    cmp = ff.compare_methods(model, prompt, T - 64, seed=0)
    record_claim(**{f"max_error_{m}": cmp.max_err_y[m] for m in ("epoched", "continuous", "prompted")})
    for m in ("epoched", "continuous", "prompted"):
        assert cmp.max_err_u[m] <= 1e-10, (m, cmp.max_err_u[m])
        assert cmp.max_err_y[m] <= 1e-10, (m, cmp.max_err_y[m])
    # the series is not trivial (noise keeps it moving) and the outputs are O(1)
    assert np.std(cmp.results["naive"].u[64:]) > 0.1
    assert 0.1 < cmp.scale_y < 100


@pytest.mark.full
def test_claim_exact_at_2_16_full(record_claim) -> None:
    T = 1 << 16
    model = ff.make_model(T, n_filters=8, kind="spectral", seed=1)
    cmp = ff.compare_methods(model, np.zeros(1), T - 1, seed=1)
    record_claim(**{f"max_error_u_{m}": cmp.max_err_u[m] for m in ("epoched", "continuous", "prompted")},
                 error_bound=1e-10)
    assert max(cmp.max_err_u[m] for m in ("epoched", "continuous", "prompted")) <= 1e-10


def test_claim_mac_growth_per_doubling(record_claim) -> None:
    """Claim: continuous MACs grow 2.2-2.5x per doubling (L = 2^8 .. 2^14); naive grows 4x."""
    lengths = [1 << k for k in range(8, 15)]
    cont = [ff.continuous_macs(L, n_filters=8) for L in lengths]
    naive = [ff.naive_macs(L, n_filters=8) for L in lengths]
    cont_ratios = [b / a for a, b in zip(cont, cont[1:])]
    naive_ratios = [b / a for a, b in zip(naive, naive[1:])]
    record_claim(continuous_growth_min=min(cont_ratios), continuous_growth_max=max(cont_ratios),
                 naive_growth=naive_ratios[-1], loglog_slope=ff.loglog_slope(lengths, cont))
    assert all(2.2 <= r <= 2.5 for r in cont_ratios), cont_ratios
    assert all(3.98 <= r <= 4.0 for r in naive_ratios), naive_ratios
    # ratios shrink towards 2 (L log^2 L): the fitted slope is between 1 and 1.5
    assert cont_ratios == sorted(cont_ratios, reverse=True)
    assert 1.0 < ff.loglog_slope(lengths, cont) < 1.5


def test_closed_form_macs_match_engine_count() -> None:
    for T, db in [(100, 0), (256, 0), (300, 16)]:
        _, eng = ff.online_convolve(np.ones(T), ff.random_filters(T, 4), "continuous", direct_below=db)
        assert eng.macs == ff.continuous_macs(T, n_filters=4, direct_below=db)
        _, naive = ff.online_convolve(np.ones(T), ff.random_filters(T, 4), "naive")
        assert naive.macs == ff.naive_macs(T, n_filters=4)


def test_prompted_cache_grows_with_generated_length_only(record_claim) -> None:
    K = 256
    model = ff.make_model(4096 + K, n_filters=4, kind="random", seed=0)
    caches, naive_caches = [], []
    for P in (16, 512, 4096):
        prompt = np.random.default_rng(P).standard_normal(P)
        cmp = ff.compare_methods(model, prompt, K, methods=("continuous", "prompted"))
        assert cmp.max_err_u["prompted"] < 1e-10
        caches.append(cmp.results["prompted"].cache_floats)
        naive_caches.append(cmp.results["continuous"].cache_floats)
        assert cmp.results["prompted"].fft_calls == 1 + (K - 1)  # one prefill + one carry per generated token
    record_claim(**{f"prompted_cache_floats_P{P}": c for P, c in zip((16, 512, 4096), caches)},
                 **{f"continuous_cache_floats_P{P}": c for P, c in zip((16, 512, 4096), naive_caches)})
    assert len(set(caches)) == 1 and caches[0] == 2 * K
    assert naive_caches == [2 * (16 + K), 2 * (512 + K), 2 * (4096 + K)]


def test_generation_is_deterministic_in_seed() -> None:
    model = ff.make_model(300, n_filters=4, kind="random", seed=0)
    a = ff.generate(model, np.ones(10), 290, "continuous", seed=5)
    b = ff.generate(model, np.ones(10), 290, "continuous", seed=5)
    c = ff.generate(model, np.ones(10), 290, "continuous", seed=6)
    assert np.array_equal(a.u, b.u) and not np.array_equal(a.u, c.u)


# ----------------------------------------------------------------------------------------------- filters and model
def test_spectral_filters_lanczos_matches_dense_eigh() -> None:
    L = 1500  # > 1024: the FFT-matvec Lanczos path
    got = ff.spectral_filters(L, 8)
    idx = np.arange(1, L + 1)
    vals, vecs = np.linalg.eigh(2.0 / ((idx[:, None] + idx[None, :]) ** 3 - (idx[:, None] + idx[None, :])))
    for k in range(8):
        want = vecs[:, -1 - k] * vals[-1 - k] ** 0.25
        assert min(np.abs(got[k] - want).max(), np.abs(got[k] + want).max()) < 1e-9


def test_fit_model_learns_a_periodic_series() -> None:
    series = ff.preset_series("sines", 600, seed=0)
    model, fit = ff.fit_model(series, 600 + 200, n_filters=16)
    assert fit["r2"] > 0.9
    cmp = ff.compare_methods(model, (series - model.mean) / model.std, 200, methods=("continuous",))
    assert cmp.max_err_u["continuous"] < 1e-10


def test_bad_inputs_raise_input_error() -> None:
    model = ff.make_model(64, 2, "random")
    with pytest.raises(InputError, match="limit|length"):
        ff.generate(model, np.ones(10), 100)
    with pytest.raises(InputError, match="Valid names: naive, epoched, continuous, prompted"):
        ff.generate(model, np.ones(10), 10, "fast")
    with pytest.raises(InputError, match="Valid names: spectral, random"):
        ff.make_model(64, 2, "hyena")


# --------------------------------------------------------------------------------------------------------- uploads
@pytest.mark.parametrize("data,n", [
    (b"1\n2\n3.5\n" * 10, 30),
    (b"value\n" + b"1.0\n-2\n" * 10, 20),
    (b"t,value\n" + b"".join(f"{i},{np.sin(i):.4f}\n".encode() for i in range(40)), 40),
    (" ".join(str(i % 7) for i in range(50)).encode(), 50),
])
def test_load_series_accepts_text_and_csv(data: bytes, n: int) -> None:
    assert ff.load_series(data).shape == (n,)


@pytest.mark.parametrize("data,match", [
    (b"", "empty"),
    (b"\x00\x01\x02binary", "binary"),
    (b"a\nb\nc\n" * 10, "numeric"),
    (b"1\n2\n3\n", "at least"),
    (b"5\n" * 40, "constant"),
    (b"1\n2\nxx\n" * 10, "not numbers"),
    (b"1\ninf\n" * 10, "inf or NaN"),
])
def test_load_series_rejects_bad_uploads(data: bytes, match: str) -> None:
    with pytest.raises(InputError, match=match):
        ff.load_series(data)


# ------------------------------------------------------------------------------------------------------------- CLI

def test_cli_bench_json(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_cli_json(["futurefill", "bench", "--min-len", "256", "--max-len", "2048", "--json"], capsys)
    assert out["lengths"] == [256, 512, 1024, 2048]
    assert set(out["slopes"]) == {"naive", "epoched", "continuous", "prompted"}
    assert out["max_err_vs_naive"] < 1e-10
    assert all(2.2 <= r <= 2.5 for r in out["mac_ratio_per_doubling"]["continuous"])
    assert abs(out["slopes"]["naive"]["macs"] - 2.0) < 0.01
    assert out["provenance"]["seed"] == 0


def test_cli_generate_json(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # noqa: ANN001
    f = tmp_path / "s.txt"
    f.write_text("\n".join(f"{np.sin(i / 5):.5f}" for i in range(300)))
    out = run_cli_json(["futurefill", "generate", "--series", str(f), "--new", "200", "--json"], capsys)
    assert len(out["continuation"]) == 200
    assert max(v["max_abs_err_u"] for v in out["methods"].values()) < 1e-10
