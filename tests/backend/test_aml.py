"""Invariants of the AML package: the scenes and expressions, the random projection (a property of
Johnson-Lindenstrauss, not of AML), PatchMax and the block masking, the controls at the same rate, the metrics, the
unchanged inference, bad settings, and a training smoke run."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.scenes.aml import data as D
from backend.scenes.aml import jobs as J
from backend.scenes.aml.features import MAX_TOKENS, FeatureSet
from backend.scenes.aml.learn import TrainConfig, evaluate, train
from backend.scenes.aml.masking import (
    MASKINGS,
    MaskConfig,
    aml_blocks,
    apply_blocks,
    patchmax,
    projection,
    random_blocks,
    upsample,
)
from backend.scenes.aml.model import HeadConfig, RefSegHead, iou_parts, scores


# ------------------------------------------------------------------------------------------------------- scenes
def test_samples_are_deterministic_and_refer_to_one_visible_object() -> None:
    for src in D.SOURCES:
        a, b = D.make_sample(3, src), D.make_sample(3, src)
        assert np.array_equal(a.image, b.image) and np.array_equal(a.mask, b.mask) and a.text == b.text
        assert a.mask.shape == (D.SIZE, D.SIZE) and a.mask.sum() >= 20 and a.text


def test_expressions_name_the_target_uniquely() -> None:
    for i in range(60):
        s = D.make_sample(i, "train")
        t = s.objects[s.target]
        assert t.color in s.text or s.kind == "shape"
        assert t.shape in s.text
        same = [o for k, o in enumerate(s.objects) if k != s.target and o.shape == t.shape and o.color == t.color]
        if s.kind in ("name", "shape"):
            assert not same
        if s.kind == "shape":
            assert sum(o.shape == t.shape for o in s.objects) == 1


def test_heldout_source_differs_from_training() -> None:
    tr, ho = D.SOURCES["train"], D.SOURCES["heldout"]
    assert not set(tr.backgrounds) & set(ho.backgrounds)
    assert not set(tr.textures) & set(ho.textures)
    assert all(D.TEMPLATES["train"][k] != D.TEMPLATES["heldout"][k] for k in D.TEMPLATES["train"])


# ---------------------------------------------------------------------------------------- random projection (JL)
@pytest.mark.parametrize("spread", [0.8, 3.0])
def test_projected_cosines_match_within_two_over_sqrt_d(spread: float) -> None:
    """At the dimension used (d = 256, width 48), 95 % of projected cosines lie within 2 / sqrt(d) of the originals,
    for correlated features (cosines around 0.6) and nearly orthogonal ones (around 0.1)."""
    cfg = MaskConfig()
    g = torch.Generator().manual_seed(1)
    base = torch.randn(1, 48, generator=g)
    x = torch.nn.functional.normalize(base + spread * torch.randn(300, 48, generator=g), dim=-1)
    pairs = torch.triu_indices(300, 300, 1).unbind()
    cos = (x @ x.T)[pairs]
    p = x @ projection(48, cfg.proj_dim, cfg.proj_seed)
    err = ((p @ p.T)[pairs] - cos).abs()
    assert float(cos.max() - cos.min()) > 0.4  # a range of cosines, not one value
    assert float((err <= 2 / cfg.proj_dim ** 0.5).float().mean()) >= 0.95


# ------------------------------------------------------------------------------------------------- the masking
def _pm(b: int = 4, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    vis, txt = torch.randn(b, 64, 48, generator=g), torch.randn(b, 9, 48, generator=g)
    mask = torch.ones(b, 9, dtype=torch.bool)
    mask[:, 7:] = False
    return patchmax(vis, txt, mask, MaskConfig())


def test_patchmax_is_a_max_of_token_softmaxes() -> None:
    pm = _pm()
    assert pm.shape == (4, 64)
    assert float(pm.min()) >= 1 / 7 - 1e-6 and float(pm.max()) <= 1 + 1e-6  # 7 real tokens


def test_blocks_hold_weak_pixels_only_and_the_count_follows_rho() -> None:
    pm = _pm()
    cfg = MaskConfig(tau=0.6, rho=0.25)
    blocks = aml_blocks(pm, cfg, torch.Generator().manual_seed(0))
    weak = (upsample(pm) < cfg.tau).view(4, 8, 14, 8, 14).any(4).any(2)
    assert blocks.any() and not (blocks & ~weak).any()
    none = aml_blocks(pm, MaskConfig(tau=1e-3), torch.Generator().manual_seed(0))
    assert not none.any()
    every = aml_blocks(pm, MaskConfig(tau=1.01, rho=1.0), torch.Generator().manual_seed(0))
    assert every.all()


def test_random_control_masks_as_many_blocks_as_aml() -> None:
    pm = _pm(8)
    cfg = MaskConfig(tau=0.6)
    a = MASKINGS["aml"](pm, cfg, torch.Generator().manual_seed(5))
    r = MASKINGS["random"](pm, cfg, torch.Generator().manual_seed(5))
    assert torch.equal(a.flatten(1).sum(1), r.flatten(1).sum(1))
    assert not MASKINGS["none"](pm, cfg, torch.Generator()).any()
    counts = torch.tensor([0, 5, 64])
    assert torch.equal(random_blocks(counts, torch.Generator().manual_seed(0)).flatten(1).sum(1), counts)


def test_apply_blocks_zeroes_exactly_the_block() -> None:
    patches, pixels = torch.ones(1, 64, 5), torch.ones(1, 3, 112, 112)
    blocks = torch.zeros(1, 8, 8, dtype=torch.bool)
    blocks[0, 2, 3] = True
    p, px = apply_blocks(patches, pixels, blocks)
    assert float(p[0, 2 * 8 + 3].abs().sum()) == 0 and float(p.sum()) == 63 * 5
    assert float(px[0, :, 28:42, 42:56].abs().sum()) == 0 and float(px.sum()) == 3 * (112 * 112 - 196)


# ------------------------------------------------------------------------------------------------- metrics
def test_scores_follow_the_refcoco_protocol() -> None:
    gt = torch.zeros(2, 10, 10, dtype=torch.bool)
    gt[0, :5] = True
    gt[1, :2] = True
    pred = gt.clone()
    pred[1, :4] = True  # IoU 0.5 on the second
    s = scores(*iou_parts(pred, gt))
    assert s["miou"] == pytest.approx(75.0) and s["oiou"] == pytest.approx(100 * 70 / 90)
    assert s["prec@0.5"] == pytest.approx(50.0) and s["prec@0.9"] == pytest.approx(50.0)


# ------------------------------------------------------------------------------------------ training, inference
def _fake(n: int = 24) -> FeatureSet:
    g = torch.Generator().manual_seed(0)
    masks = torch.zeros(n, 112, 112, dtype=torch.bool)
    masks[:, 30:60, 40:70] = True
    tm = torch.ones(n, MAX_TOKENS, dtype=torch.bool)
    tm[:, 10:] = False
    return FeatureSet(torch.randn(n, 64, 384, generator=g).half(), torch.randn(n, MAX_TOKENS, 384, generator=g).half(),
                      tm, torch.randint(0, 255, (n, 112, 112, 3), generator=g, dtype=torch.uint8), masks,
                      ["x"] * n, ["name"] * n)


@pytest.mark.parametrize("masking", list(MASKINGS))
def test_every_masking_trains_and_same_seed_same_start(masking: str) -> None:
    data = _fake()
    res = train(TrainConfig(masking=masking, steps=3, batch=4, eval_every=3), data, {"val": data})
    assert len(res.losses) == 3 and all(np.isfinite(res.losses))
    assert len(res.curves["val_miou"]) == 1 and 0.0 <= res.masked_share <= 1.0
    torch.manual_seed(0)
    a = RefSegHead(HeadConfig())
    torch.manual_seed(0)
    b = RefSegHead(HeadConfig())
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))
    assert set(evaluate(res.model, data)) == {"miou", "oiou", "prec@0.5", "prec@0.7", "prec@0.9"}


def test_inference_is_unchanged_by_the_masking_settings() -> None:
    img, text, gt = J.preset_sample(_presets()[0])
    from backend.models.text import load_text_encoder
    from backend.models.vision import load_vision_encoder

    enc = (load_vision_encoder(), load_text_encoder())
    a = J.run_segment(img, J.SegmentConfig(text=text, tau=0.4, rho=0.25), mask=gt, encoders=enc)
    b = J.run_segment(img, J.SegmentConfig(text=text, tau=0.9, rho=1.0), mask=gt, encoders=enc)
    for pa, pb in zip(a.panels, b.panels, strict=True):
        assert np.array_equal(pa["mask"], pb["mask"]) and pa["iou"] == pb["iou"]
    assert sum(int(p["blocks"].sum()) for p in b.panels) >= sum(int(p["blocks"].sum()) for p in a.panels)


def _presets() -> list[str]:
    from backend.scenes.aml.inputs import PRESETS

    return list(PRESETS)


# ------------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs", [{"text": ""}, {"text": "   "}, {"text": "x" * 121}, {"text": "a", "seed": 9},
                                    {"text": "a", "tau": 0.0}, {"text": "a", "rho": 1.5},
                                    {"text": "a", "maskings": ("bogus",)}])
def test_segment_config_refuses(kwargs) -> None:  # noqa: ANN001
    with pytest.raises(InputError):
        J.SegmentConfig(**kwargs)


@pytest.mark.parametrize("kwargs", [{"split": "train"}, {"n": 5}, {"n": 5000}, {"seeds": (7,)}, {"seeds": ()}])
def test_eval_config_refuses(kwargs) -> None:  # noqa: ANN001
    with pytest.raises(InputError):
        J.EvalConfig(**kwargs)


def test_configs_and_jobs_pickle() -> None:
    import pickle

    cfg = J.SegmentConfig(text="the red circle")
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    assert pickle.loads(pickle.dumps(J.EvalConfig(n=60))) == J.EvalConfig(n=60)
    assert pickle.loads(pickle.dumps(J.run_segment)) is J.run_segment
