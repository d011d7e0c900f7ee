"""Invariants of the LAION audit: counts and PMI exact on a hand-built corpus, interval coverage, the caption reader's
limits and encodings, escaped exports, the planted generator, the dual encoder's shapes and the shipped encoders'
quality records."""

from __future__ import annotations

import io
import math
import zipfile

import numpy as np
import pytest

from backend.data.laionaudit import audit as A
from backend.data.laionaudit import jobs as J
from backend.data.laionaudit.captions import MAX_ROWS, read_captions, to_parquet
from backend.errors import InputError

HAND = [
    "A woman with a laptop in the kitchen",      # female, laptop, kitchen
    "a man with a laptop",                        # male, laptop
    "The man and his dog",                        # male (man, his)
    "woman cooking in the kitchen, she smiles",   # female, kitchen, cooking
    "a man and a woman with a laptop",            # both genders, laptop
    "stock photo of a laptop",                    # no identity, laptop
    "Her kitchen",                                # female, kitchen
    "a child with a laptop",                      # child, laptop
]


def test_counts_and_pmi_are_exact_on_a_hand_built_corpus() -> None:
    cfg = J.AuditConfig(source="upload", lists=(), ngrams=False, extra=("laptop", "kitchen", "cooking"), min_count=1)
    r = J.run_audit(cfg, HAND)
    rows = {x["concept"]: x for x in r.concepts}
    assert r.groups["female"]["captions"] == 4 and r.groups["male"]["captions"] == 3
    assert r.groups["single_female"]["captions"] == 3 and r.groups["single_male"]["captions"] == 2
    assert r.groups["child"]["captions"] == 1 and r.groups["no_identity_term"]["captions"] == 1
    lap, kit = rows["laptop"], rows["kitchen"]
    assert (lap["captions"], lap["female"], lap["male"], lap["single_gender"]) == (5, 2, 2, 2)
    assert (kit["captions"], kit["female"], kit["male"], kit["single_gender"]) == (3, 3, 0, 3)
    assert lap["female_share"] == 0.5 and kit["female_share"] == 1.0
    n = len(HAND)
    assert lap["pmi_female"] == pytest.approx(math.log(2 * n / (4 * 5)), abs=1e-5)
    assert kit["pmi_female"] == pytest.approx(math.log(3 * n / (4 * 3)), abs=1e-5)
    assert kit["pmi_male"] is None  # never co-occur
    assert rows["cooking"]["pmi_female"] == pytest.approx(math.log(1 * n / (4 * 1)), abs=1e-5)
    assert r.top_female[0] in ("kitchen", "cooking") and r.top_male == ["laptop"]


def test_a_term_counts_once_per_caption_and_case_and_punctuation_are_ignored() -> None:
    c = A.Counts(["WOMAN, woman; Woman!", "a red laptop laptop"], ["woman", "laptop", "red laptop"])
    assert c.matrix(["woman", "laptop", "red laptop"]).toarray().tolist() == [[1, 0, 0], [0, 1, 1]]


def test_pmi_interval_covers_the_truth_in_simulation() -> None:
    rng = np.random.default_rng(0)
    n, pg, pc, lift = 4000, 0.3, 0.1, 1.8
    p11 = pg * pc * lift
    probs = [p11, pg - p11, pc - p11, 1 - pg - pc + p11]
    truth = math.log(lift)
    cells = rng.multinomial(n, probs, size=2000)
    lo, hi = A.pmi_ci(cells[:, 0], cells[:, 0] + cells[:, 1], cells[:, 0] + cells[:, 2], n)
    cover = float(np.mean((lo <= truth) & (truth <= hi)))
    assert 0.93 <= cover <= 0.97, cover


def test_wilson_interval_contains_the_share_and_stays_in_0_1() -> None:
    lo, hi = A.wilson(np.array([0, 3, 10]), np.array([10, 10, 10]))
    assert (lo >= 0).all() and (hi <= 1).all()
    assert lo[1] < 0.3 < hi[1] and lo[0] == 0 and hi[2] == pytest.approx(1.0)


def test_vectorised_vader_lexicon_agrees_with_vaders_rules_on_plain_captions() -> None:
    from backend.data.laionaudit.webcorpus import generate

    caps = generate(600, seed=3)
    a, b = A.negative_flags(caps), A.negative_flags(caps, rules=True)
    assert float(np.mean(a == b)) > 0.95


# ---------------------------------------------------------------------------------------------- the caption reader
def test_reader_finds_the_caption_column_and_ignores_ids() -> None:
    caps = read_captions(b"id,url,caption\n1,http://x,a woman\n2,http://y,\n3,http://z,a man\n", name="c.csv")
    assert caps.texts == ["a woman", "a man"] and caps.column == "caption" and caps.empty == 1
    caps = read_captions(b"TEXT;width\nhello there;3\n", name="c.csv")
    assert caps.texts == ["hello there"]


def test_reader_refuses_wrong_encodings_unless_chosen() -> None:
    data = "caption\n\"caf\u00e9 owner, a woman\"\n".encode("latin-1")
    with pytest.raises(InputError, match="not valid UTF-8"):
        read_captions(data, name="c.csv")
    assert read_captions(data, name="c.csv", encoding="latin-1").texts == ["caf\u00e9 owner, a woman"]
    u16 = "caption\na man\n".encode("utf-16")
    with pytest.raises(InputError, match="UTF-16|NUL"):
        read_captions(u16, name="c.csv")
    assert read_captions(u16, name="c.csv", encoding="utf-16").texts == ["a man"]


def test_reader_refuses_missing_columns_and_names_them() -> None:
    with pytest.raises(InputError, match="no caption column.*'a', 'b'"):
        read_captions(b"a,b,c\n1,x,y\n", name="c.csv")
    with pytest.raises(InputError, match="no column 'alt'"):
        read_captions(b"caption\nx\n", name="c.csv", column="alt")


def test_reader_limits_rows_and_sizes() -> None:
    with pytest.raises(InputError, match="limit is 5"):
        read_captions(b"caption\n" + b"a\n" * 6, name="c.csv", max_rows=5)
    with pytest.raises(InputError, match="limit"):
        read_captions(to_parquet(["x"] * 6), name="c.parquet", max_rows=5)
    assert MAX_ROWS == 1_000_000


def test_reader_reads_parquet_and_zip_and_refuses_a_zip_bomb(monkeypatch) -> None:  # noqa: ANN001
    from backend.data.laionaudit import captions as C

    assert read_captions(to_parquet(["a woman", "", "a man"]), name="c.parquet").texts == ["a woman", "a man"]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("c.csv", "caption\n" + "a woman\n" * 10)
    assert len(read_captions(buf.getvalue(), name="c.zip").texts) == 10
    monkeypatch.setattr(C, "MAX_UNCOMPRESSED", 2**20)  # the same check at 512 MB, on a 4 MB member
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("c.csv", b"caption\n" + b"a" * (4 * 2**20))
    assert len(bomb.getvalue()) < 20_000
    with pytest.raises(InputError, match="limit"):
        read_captions(bomb.getvalue(), name="bomb.zip")


def test_export_escapes_formula_cells(tmp_path) -> None:  # noqa: ANN001
    import pandas as pd

    from backend.io.export import to_csv

    cfg = J.AuditConfig(source="upload", lists=(), ngrams=False, extra=("=cmd", "laptop"), min_count=1)
    r = J.run_audit(cfg, ["=cmd a woman with a laptop"])
    text = to_csv(pd.DataFrame(r.concepts + [{"concept": "=HYPERLINK(1)", "captions": -1}]))
    assert "\n'=HYPERLINK(1),-1" in text and ",-1" in text


def test_config_refuses_bad_settings() -> None:
    with pytest.raises(InputError, match="caption source"):
        J.AuditConfig(source="laion")
    with pytest.raises(InputError, match="concept list"):
        J.AuditConfig(lists=("nope",))
    with pytest.raises(InputError, match="at least one"):
        J.AuditConfig(lists=(), ngrams=False)
    with pytest.raises(InputError, match="50,000"):
        J.run_audit(J.AuditConfig(size=60_000, vader_rules=True))


# ---------------------------------------------------------------------------------------------- the planted corpus
def test_planted_corpus_is_deterministic_and_recovers_the_planted_rates() -> None:
    from backend.data.laionaudit.planted import PlantedConfig, planted, sample
    from backend.data.laionaudit.transfer import concept_counts, female_share

    cfg = PlantedConfig(images=3000, mention=1.0, noise=0.0, seed=4)
    a, b = sample(cfg), sample(cfg)
    assert a.captions == b.captions and np.array_equal(a.images, b.images) and a.images.shape == (3000, 24, 24, 3)
    p = planted(0)
    assert abs(float(np.corrcoef(p.rate, p.age_load)[0, 1])) < 1e-9
    share = female_share(concept_counts(a.captions, list(__import__(
        "backend.data.laionaudit.planted", fromlist=["CONCEPTS"]).CONCEPTS)))
    assert np.corrcoef(share, p.rate)[0, 1] > 0.95
    assert np.array_equal(a.hair_long, a.female) and np.array_equal(a.dress, a.female)


def test_noise_and_shuffle_do_what_they_say() -> None:
    from backend.data.laionaudit.planted import PlantedConfig, sample

    noisy = sample(PlantedConfig(images=4000, noise=1.0, seed=1), render_images=False)
    agree = float(np.mean(noisy.hair_long == noisy.female))
    assert 0.45 < agree < 0.55
    plain = sample(PlantedConfig(images=500, seed=2), render_images=False)
    shuf = sample(PlantedConfig(images=500, seed=2, shuffle=True), render_images=False)
    assert sorted(plain.captions) == sorted(shuf.captions) and plain.captions != shuf.captions


def test_dual_encoder_shapes_and_unit_norms() -> None:
    import torch

    from backend.data.laionaudit.dual import DualEncoder, to_tensor, tokenize
    from backend.data.laionaudit.planted import evaluation_set

    m = DualEncoder()
    ims, fem = evaluation_set(per_gender=4)
    v, t = m.encode_image(to_tensor(ims)), m.encode_text(tokenize(["a woman with a kite", "a man"]))
    assert v.shape == (8, 32) and t.shape == (2, 32) and fem.sum() == 4
    assert torch.allclose(v.norm(dim=1), torch.ones(8), atol=1e-5)
    assert m.num_parameters() == 9873


def test_linear_fit_r2_is_one_on_a_line_and_zero_on_a_constant_slope() -> None:
    from backend.data.laionaudit.dual import linear_fit

    x = np.linspace(0, 1, 10)
    assert linear_fit(x, 2 * x + 1)["r2"] == pytest.approx(1.0)
    assert linear_fit(x, np.cos(20 * x) * 0 + 3)["r2"] == 0.0


def test_shipped_encoders_reproduce_their_recorded_quality() -> None:
    from backend import weights
    from backend.data.laionaudit import transfer as T

    for name in ("base", "shuffled"):
        meta = weights.read_meta(T.SETTINGS[name].path)
        ev = T.evaluate(name)
        for row in ev["seeds"]:
            assert row["r2"] == pytest.approx(meta.quality[f"seed{row['seed']}_r2"], abs=1e-4)
