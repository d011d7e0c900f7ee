"""The shared scene package (backend/scenes): the iLLaVA images it renders are pinned bit for bit (sha256 of the
scenes the claims, the shipped evaluation, the page's presets and the shipped projector's training use), and the
invariants of the generic scenes, clips and augmentations hold: determinism, masks that match the image, depth
ordering that matches occlusion, camera moves that shift content by the stated amount, label maps that follow their
images through the augmentations."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from backend.scenes.clips import Motion, SceneConfig, make_clip, make_scene, make_scenes, sample_layout
from backend.scenes.objects import PALETTE, SHAPES, TEXTURES, Instance, object_mask
from backend.scenes.render import Backdrop, Lighting, draw
from backend.tokens.illava import scenes as illava

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------------------- iLLaVA golden
def _images_digest(images) -> str:
    h = hashlib.sha256()
    for im in images:
        h.update(np.ascontiguousarray(im).tobytes())
    return h.hexdigest()


def _meta_digest(scene_list) -> str:
    """Objects (rounded to 1e-6 px) and questions of the scenes, in order."""
    h = hashlib.sha256()
    for s in scene_list:
        h.update(repr([(o.color, o.shape, round(o.cx, 6), round(o.cy, 6), round(o.radius, 6), o.quadrant)
                       for o in s.objects]).encode())
        h.update(repr([(q.kind, q.text, q.answer, q.candidates) for q in s.questions]).encode())
    return h.hexdigest()


# one scene each: the page's four presets (held-out 0-3), the VLM tests' scene (7), the page test's upload (11)
ILLAVA_SCENES = {
    1_000_000: "6361e2837b0bf1fe0f4e9942e782a4c2b4219b9c4ec5be092668e6cb0d33ed95",
    1_000_001: "b330a278487db47604bea77cf0684085a31e33b6a23be262f78173f4c195db1e",
    1_000_002: "3a09d04017f5f9cdeba9fa96acc06bf7795669d88f97a2604eff8f2f52571305",
    1_000_003: "32e1c980f3da90aa91f5c85c9c4fd329b2215b8cf3544cbd205391965cba6969",
    1_000_007: "048e04f6ded630bab1bbd829fef2fea5265cd9bda1fd6a0595176f4b33799279",
    1_000_011: "68d4c3b37e09db975510c74ff9d12f3f6342bbaa2393a22bd44de3eadb42f77c",
}
HELDOUT_36 = "a8343727368c6614ffffb7e4b956924d2aeb35daf019bdc6650fba2de3e1233e"  # ci claims, diagnosis, sweep
HELDOUT_200 = "4153ff3754e28ff94928c087ced93b51ec9cf85bdfeccc8dbe40972bfee230a5"  # full-tier claim
HELDOUT_200_META = "c1c06acfd28f165de0a0fafbcebde1ca2a17d3fb39da3c8f344e711ec82616de"
SCALED_36 = {0.7: "80e0379378117e8b9ae39bec026de10233536f3e0a536fcb8ecad0f439aaa60a",  # diagnosis size control
             1.3: "71145a88a95b06196e9e473a87f1fb9ac430a2cbbcc07d19526d06af8af2c2c2"}
COVERAGE_36 = "daef422b528b19d33a1d5982ba6415d7b1c68cbe87f22c9cfab2655e03b9d78a"
EQUAL_AREA = (0.09, 0.2)  # the shipped projector's training scenes (--equal-area 0.09,0.2, seeds 0-1199)
TRAIN_200 = "c743fd2a03ea1b75b824d06100381319f0aa7a29f7daa5eb77873d484281ec23"
TRAIN_1200 = "a880cdb8a7e3a15c8001492e902be8919be4272395a1d3d447bc12da87d33e75"
TRAIN_1200_META = "388c3fb4e37e5b497af7fcf7015a3b0e5fa11d6e56791538c915eb82bf3e0770"
TRAIN_64 = {"default": "87b989d4d381ed456a597ae67b5949125308f1a5931e9092d443f61dd77e7423",
            "radius": "707d1c17b63b37c27d8904dd5e1baf3298a4401ffb85f14fb202b20715e79321"}
TRAINING_QUESTIONS_64 = "895a773fef2913258249c17c1cf063f0cc117b604c34d18bbfb20662d124950e"


@pytest.fixture(scope="module")
def heldout():
    return illava.scenes(200, "heldout")


def test_illava_scenes_are_bit_identical(heldout):
    for seed, digest in ILLAVA_SCENES.items():
        assert hashlib.sha256(illava.make_scene(seed).image.tobytes()).hexdigest() == digest, seed
    assert _images_digest(s.image for s in heldout[:36]) == HELDOUT_36
    assert _images_digest(s.image for s in heldout) == HELDOUT_200
    assert _meta_digest(heldout) == HELDOUT_200_META
    for f, digest in SCALED_36.items():
        assert _images_digest(illava.with_object_scale(s, f).image for s in heldout[:36]) == digest, f
    cov = np.stack([illava.patch_coverage(s) for s in heldout[:36]]).astype(np.float64)
    assert hashlib.sha256(cov.tobytes()).hexdigest() == COVERAGE_36


def test_illava_training_scenes_are_bit_identical():
    train = illava.scenes(200, "train", area_range=EQUAL_AREA)
    assert _images_digest(s.image for s in train) == TRAIN_200
    assert _images_digest(s.image for s in illava.scenes(64, "train")) == TRAIN_64["default"]
    assert _images_digest(s.image for s in illava.scenes(64, "train", radius_range=(0.05, 0.19))) == TRAIN_64["radius"]
    rng = np.random.default_rng(0)
    qs = repr([[(q.kind, q.text, q.answer) for q in illava.training_questions(s, rng)] for s in train[:64]])
    assert hashlib.sha256(qs.encode()).hexdigest() == TRAINING_QUESTIONS_64


@pytest.mark.full
def test_illava_all_training_scenes_are_bit_identical():
    train = illava.scenes(1200, "train", area_range=EQUAL_AREA)
    assert _images_digest(s.image for s in train) == TRAIN_1200
    assert _meta_digest(train) == TRAIN_1200_META


def test_illava_frame_labels_its_objects(heldout):
    """The iLLaVA scene's frame: the same image, one id per object (its quadrant's pixels), one depth."""
    s = heldout[5]
    f = s.frame()
    assert np.array_equal(f.image, s.image)
    assert sorted(np.unique(f.instances)) == list(range(len(s.objects) + 1))
    for k, o in enumerate(s.objects, 1):
        assert np.array_equal(f.instances == k, object_mask(o.instance(), *f.instances.shape))


# ----------------------------------------------------------------------------------------------- generic scenes
CONFIGS = {
    "default": SceneConfig(),
    "crowded": SceneConfig(size=(96, 128), objects=(6, 9), radius=(0.12, 0.25), clutter=(4, 10)),
    "small": SceneConfig(size=64, objects=(1, 3), backgrounds=("fractal", "grating")),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_scenes_are_deterministic(name):
    cfg = CONFIGS[name]
    a, b = make_scene(11, cfg), make_scene(11, cfg)
    for k in ("image", "instances", "depth"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    assert a.objects == b.objects
    others = make_scenes(range(12, 16), cfg)
    assert all(not np.array_equal(a.image, o.image) for o in others)
    assert a.image.shape == (*cfg.shape, 3) and a.instances.dtype == np.int32 and a.depth.dtype == np.float32


def test_clips_are_deterministic():
    a, b = (make_clip(4, SceneConfig(size=64), Motion(frames=5, shake=1.0, growth=0.02)) for _ in range(2))
    for k in ("images", "instances", "depth", "camera", "velocity", "centres"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    assert a.images.shape == (5, 64, 64, 3) and a.centres.shape == (5, len(a.layout.objects), 2)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_masks_match_the_image(name):
    """Ids are unique (1..N, each object's visible pixels inside its own shape), and every pixel of an opaque object
    differs from the background behind it (rendered with the same camera and light, without objects)."""
    cfg = CONFIGS[name]
    for seed in range(6):
        lay = sample_layout(seed, cfg)
        f = lay.render()
        bg = draw(lay.backdrop, [], f.camera, lay.lighting).image
        ids = np.unique(f.instances)
        assert set(ids.tolist()) <= set(range(len(f.objects) + 1))
        for k, o in enumerate(f.objects, 1):
            vis = f.instances == k
            assert not (vis & ~object_mask(o, *vis.shape)).any(), (seed, k)
            assert o.opacity == 1 and (f.image[vis] != bg[vis]).any(axis=1).all(), (seed, k, o.label)
        assert np.array_equal(f.image[f.instances == 0], bg[f.instances == 0])


def test_translucent_objects_blend_and_stay_labelled():
    cfg = SceneConfig(size=64, translucent=1.0, lighting=False)
    f = make_scene(2, cfg)
    assert all(0.5 <= o.opacity <= 0.8 for o in f.objects)
    assert sorted(np.unique(f.instances))[1:] == [k for k in range(1, len(f.objects) + 1)
                                                   if (f.instances == k).any()]


def test_depth_ordering_matches_occlusion():
    """At every pixel the visible object is the nearest of those whose shapes cover it (equal depths: the later in
    the list), and the depth map is its depth (the backdrop's where none covers)."""
    cfg = CONFIGS["crowded"]
    overlaps = 0
    for seed in range(8):
        f = make_scene(seed, cfg)
        h, w = f.instances.shape
        masks = np.stack([object_mask(o, h, w) for o in f.objects])
        overlaps += int((masks.sum(0) > 1).sum())
        depths = np.array([o.depth for o in f.objects])
        # nearest covering object; ties to the later one (reverse, argmin takes the first)
        d = np.where(masks, depths[:, None, None], np.inf)[::-1]
        nearest = len(f.objects) - np.argmin(d, axis=0)
        covered = masks.any(0)
        assert np.array_equal(f.instances, np.where(covered, nearest, 0)), seed
        assert np.array_equal(f.depth, np.where(covered, d.min(0), cfg.background_depth).astype(np.float32)), seed
    assert overlaps > 500  # the check saw real occlusions


def test_equal_depths_paint_in_list_order():
    a = Instance("square", "red", 30.0, 30.0, 12.0)
    b = Instance("circle", "blue", 38.0, 30.0, 12.0)
    bd = Backdrop(np.full((64, 64, 3), 200, np.uint8))
    assert draw(bd, [a, b]).instances[30, 34] == 2 and draw(bd, [b, a]).instances[30, 34] == 2
    near = Instance("square", "red", 30.0, 30.0, 12.0, depth=0.5)
    assert draw(bd, [near, b]).instances[30, 34] == 1  # nearer wins whatever the order


CAMERA_PATH = ((0.0, 0.0), (8.0, -4.0), (-12.0, 16.0), (20.0, 8.0))


@pytest.mark.parametrize("depth", [1.0, 2.0])
def test_camera_motion_shifts_content_by_the_stated_amount(depth):
    """A camera offset (x, y) moves an object at depth d by -(x, y) / d pixels (exactly, for whole pixels) and the
    backdrop by -(x, y) / background_depth; nothing else changes when the objects stand still."""
    cfg = SceneConfig(size=96, objects=(3, 4), depth=(depth, depth), lighting=False, background_depth=4.0)
    clip = make_clip(3, cfg, Motion(frames=len(CAMERA_PATH), speed=0, spin=0, camera_path=CAMERA_PATH,
                                    light_drift=0))
    h, w = cfg.shape
    f0 = clip.frames[0]
    for t, (cx, cy) in enumerate(CAMERA_PATH):
        f = clip.frames[t]
        np.testing.assert_array_equal(clip.centres[t] - clip.centres[0],
                                      np.tile([-cx / depth, -cy / depth], (len(f.objects), 1)))
        # objects: frame t at (y, x) shows what frame 0 showed at (y + cy/d, x + cx/d)
        ox, oy = int(cx / depth), int(cy / depth)
        ys, xs = slice(max(0, -oy), min(h, h - oy)), slice(max(0, -ox), min(w, w - ox))
        ys0, xs0 = slice(ys.start + oy, ys.stop + oy), slice(xs.start + ox, xs.stop + ox)
        now, then = f.instances[ys, xs], f0.instances[ys0, xs0]
        assert np.array_equal(now > 0, then > 0) and np.array_equal(now, then), t
        # backdrop: shifted by the offset over its depth, where neither frame has an object
        bx, by = round(cx / cfg.background_depth), round(cy / cfg.background_depth)
        ys, xs = slice(max(0, -by), min(h, h - by)), slice(max(0, -bx), min(w, w - bx))
        ys0, xs0 = slice(ys.start + by, ys.stop + by), slice(xs.start + bx, xs.stop + bx)
        free = (f.instances[ys, xs] == 0) & (f0.instances[ys0, xs0] == 0)
        assert free.mean() > 0.3
        assert np.array_equal(f.image[ys, xs][free], f0.image[ys0, xs0][free]), t


def test_objects_move_pose_and_light_changes_over_a_clip():
    clip = make_clip(5, SceneConfig(size=96), Motion(frames=6, camera_speed=0, spin=0.1, growth=0.05))
    cen = clip.centres
    np.testing.assert_allclose(cen[5] - cen[0], 5 * clip.velocity, atol=2 / 256)
    a0 = [o.angle for o in clip.frames[0].objects]
    a5 = [o.angle for o in clip.frames[5].objects]
    assert any(abs(x - y) > 1e-3 for x, y in zip(a0, a5, strict=True))
    gains = [f.lighting.gain for f in clip.frames]
    assert len(set(gains)) > 1 and clip.visible.shape == (6, len(clip.layout.objects))


def test_every_class_texture_and_background_renders():
    bd = Backdrop(np.full((48, 48, 3), 220, np.uint8))
    for shape in SHAPES:
        for tex in TEXTURES:
            o = Instance(shape, "purple", 24.0, 24.0, 16.0, angle=0.4, texture=tex)
            f = draw(bd, [o])
            px = f.image[f.instances == 1]
            assert len(px) > 60, (shape, tex)
            assert (len(np.unique(px, axis=0)) > 1) == (tex != "flat"), (shape, tex)
    for bg in ("plain", "gradient", "grating", "fractal"):
        f = make_scene(0, SceneConfig(size=64, backgrounds=(bg,), objects=(0, 0), lighting=False))
        assert f.image.min() >= 150 and not f.instances.any()


def test_neutral_lighting_changes_nothing_and_classes_follow_shapes():
    lay = sample_layout(1, SceneConfig(size=64, lighting=False))
    f = lay.render()
    assert np.array_equal(draw(lay.backdrop, lay.objects, lighting=Lighting()).image, f.image)
    for k, o in enumerate(f.objects, 1):
        assert (f.classes[f.instances == k] == SHAPES.index(o.shape) + 1).all()


def test_invalid_configs_are_refused():
    for bad in (dict(size=8), dict(objects=(3, 2)), dict(shapes=("blob",)), dict(colors=()),
                dict(depth=(1.0, 9.0)), dict(translucent=2.0), dict(radius=(0.1, 0.9))):
        with pytest.raises(ValueError):
            SceneConfig(**bad)
    with pytest.raises(ValueError, match="margin"):
        sample_layout(0, SceneConfig(size=32)).render(camera=(40.0, 0.0))
    with pytest.raises(ValueError, match="colour"):
        draw(Backdrop(np.zeros((8, 8, 3), np.uint8)), [Instance("circle", "mauve", 4.0, 4.0, 2.0)])
    assert set(PALETTE) >= set(illava.COLORS) and illava.COLORS["red"] == PALETTE["red"]


def test_importing_the_package_loads_no_torch():
    code = ("import sys; import backend.scenes as s; s.make_scene(0); s.make_clip(0); "
            "assert 'torch' not in sys.modules and 'kornia' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


# ------------------------------------------------------------------------------------------------ augmentations
@pytest.fixture(scope="module")
def batch():
    from backend.scenes.augment import to_tensors

    return to_tensors(make_scenes(range(6), SceneConfig(size=64, objects=(3, 5))))


def test_augmentations_are_deterministic_and_leave_the_global_generator(batch):
    import torch

    from backend.scenes.augment import AugmentConfig, augment_batch

    x, ids, depth = batch
    state = torch.get_rng_state()
    a = augment_batch(x, ids, depth, AugmentConfig(), seed=5)
    b = augment_batch(x, ids, depth, AugmentConfig(), seed=5)
    c = augment_batch(x, ids, depth, AugmentConfig(), seed=6)
    assert torch.equal(torch.get_rng_state(), state)
    for k in ("images", "instances", "depth", "matrix"):
        assert torch.equal(getattr(a, k), getattr(b, k)), k
    assert not torch.equal(a.images, c.images)
    assert a.images.shape == x.shape and a.instances.dtype == torch.int64 and a.depth.shape == depth.shape
    assert set(a.instances.unique().tolist()) <= set(ids.unique().tolist())
    assert set(a.depth.unique().tolist()) <= set(depth.unique().tolist())  # nearest: no blended depths


def test_augmentations_keep_label_maps_aligned(batch):
    """The same geometry reaches the image and its label maps: with an image that encodes the labels, nearest
    sampling gives them back exactly; bilinear sampling gives them back wherever the labels are locally uniform."""
    import torch
    import torch.nn.functional as F

    from backend.scenes.augment import AugmentConfig, augment_batch

    _, ids, depth = batch
    coded = torch.stack([ids.float() / 10, depth / 8, torch.zeros_like(depth)], 1)
    geometry = dict(p_jitter=0.0, p_blur=0.0, p_hflip=0.5, p_vflip=0.5, crop_scale=(0.2, 0.8))
    for seed in range(3):
        out = augment_batch(coded, ids, depth, AugmentConfig(resample="nearest", size=48, **geometry), seed=seed)
        assert torch.equal((out.images[:, 0] * 10).round().long(), out.instances)
        assert torch.allclose(out.images[:, 1] * 8, out.depth, atol=1e-5)
        out = augment_batch(coded, ids, depth, AugmentConfig(**geometry), seed=seed)
        lab = out.instances.float()[:, None]
        uniform = (F.max_pool2d(lab, 7, 1, 3) == -F.max_pool2d(-lab, 7, 1, 3))[:, 0]  # crops enlarge up to 2.2x
        got = (out.images[:, 0] * 10).round().long()
        assert uniform.float().mean() > 0.5 and torch.equal(got[uniform], out.instances[uniform])


def test_flips_and_colour_changes(batch):
    import torch

    from backend.scenes.augment import AugmentConfig, augment_batch

    x, ids, depth = batch
    flip = augment_batch(x, ids, depth, AugmentConfig(p_crop=0.0, p_jitter=0.0, p_blur=0.0, p_hflip=1.0), seed=0)
    assert torch.equal(flip.images, x.flip(-1)) and torch.equal(flip.instances, ids.flip(-1))
    assert torch.equal(flip.depth, depth.flip(-1))
    colour = augment_batch(x, ids, depth, AugmentConfig(p_crop=0.0, p_hflip=0.0, p_jitter=1.0, p_blur=1.0), seed=0)
    assert torch.equal(colour.instances, ids) and torch.equal(colour.depth, depth)  # colour touches images only
    assert (colour.images - x).abs().mean() > 0.01


def test_augment_refuses_bad_settings_and_inputs(batch):
    from backend.errors import InputError
    from backend.scenes.augment import AugmentConfig, augment_batch

    for bad in (dict(p_hflip=1.5), dict(crop_scale=(0.0, 1.0)), dict(blur_kernel=4), dict(resample="cubic"),
                dict(size=4)):
        with pytest.raises(InputError):
            AugmentConfig(**bad)
    x, ids, _ = batch
    with pytest.raises(InputError, match="label maps"):
        augment_batch(x, ids[:, :10])
    out = augment_batch(np.zeros((2, 32, 32, 3), np.uint8), config=AugmentConfig(size=16))
    assert out.images.shape == (2, 3, 16, 16) and out.instances is None and out.depth is None


def test_contact_sheet_stacks_images_masks_and_depth():
    from backend.scenes.render import contact_sheet, instance_colors

    frames = make_scenes(range(3), SceneConfig(size=32))
    sheet = contact_sheet(frames, gap=2)
    assert sheet.shape == (3 * 32 + 4, 3 * 32 + 4, 3) and sheet.dtype == np.uint8
    assert np.array_equal(sheet[:32, 34:66], frames[1].image)
    assert np.array_equal(sheet[34:66, :32], instance_colors(frames[0].instances))
