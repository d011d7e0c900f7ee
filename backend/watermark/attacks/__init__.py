"""The one attack grammar of the watermark pages, for images and videos: ``"jpeg:50+resize:0.5"``.

A chain is steps joined by ``+``; a step is ``name`` or ``name:value`` (no value: the default below); ``""``,
``"none"`` and ``"clean"`` are the empty chain. A parameter means the same for images and videos and is given in the
unit of the table. Images are ``(H, W, 3)`` uint8 (:func:`apply_chain`); videos are float ``[F, H, W, 3]`` in [0, 1]
(:func:`apply_video_chain`, which also returns the frame map). Every step is deterministic given the chain's seed.

============  ==============================================  ===============  =========  =======  =============
name          what                                            value (unit)     range      default  media
============  ==============================================  ===============  =========  =======  =============
jpeg          JPEG compression (Pillow)                       quality          10-100     50       image, video
noise         additive Gaussian noise                         sigma, 0-255     0-40       8        image, video
blur          Gaussian blur, K x K kernel (OpenCV sigma)      kernel K, px     1-15       3        image, video
blur_sigma    Gaussian blur of standard deviation S (Pillow)  sigma S, px      0-10       0.5      image, video
brightness    brightness factor                               factor           0.3-2      1.3      image, video
contrast      contrast factor                                 factor           0.3-2      0.7      image, video
resize        downscale                                       side scale       0.2-1      0.5      image, video
crop          cut a window of the same aspect, side sqrt(1-F) area cut away F  0-0.9      0.25     image, video
mp4           MP4 (OpenCV mp4v) re-encoding                   (none)                               video
drop          drop K consecutive frames (``KxP``: at P places) K or KxP                   2        video
insert        insert K noise frames (``KxP``: at P places)    K or KxP                    2        video
swap          swap P pairs of adjacent frames                 P                           1        video
trim_start    remove K frames after frame 0                   K                           4        video
trim_end      remove the last K frames                        K                           4        video
clip          keep frame 0 and K consecutive frames           K                           12       video
fps           frame-rate change, nearest frame                R = new / old    0.2-5      0.8      video
wevade-w      white-box PGD on the learned decoder            eps, 0-255                  8        image
wevade-bq     black-box, query-limited (HopSkipJump)          queries                     200      image
============  ==============================================  ===============  =========  =======  =============

Where the media differ: an image keeps the size an attack gives it (``resize`` and ``crop`` return the smaller image,
the crop window at a random place; decoders resize); a video keeps its frame size (the extractor works at the
generator's size): ``resize`` and ``crop`` scale back, the crop window is centred and the same in every frame.
Temporal attacks keep frame 0 (see :mod:`.video`); ``wevade-*`` need a watermark backend and a user pool
(:class:`.adversarial.AdversarialContext`).

:data:`ATTACKS` is the table as a :class:`backend.registry.Registry` (name -> :class:`Attack`): pages read the
sliders' units, ranges and sweeps from it. Modules: :mod:`.image` and :mod:`.video` (the functions),
:mod:`.adversarial` (WEvade), :mod:`.training` (differentiable noise layers for training).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from backend.errors import InputError
from backend.registry import Registry
from backend.watermark.attacks import image as _img
from backend.watermark.attacks import video as _vid
from backend.watermark.attacks.adversarial import AdversarialContext, black_box_attack, white_box_attack
from backend.watermark.attacks.training import jpeg_straight_through, noise_layer

NUMBER, COUNT, COUNT_PLACES, NONE = "number", "count", "count_x_places", "none"


@dataclass(frozen=True)
class Attack:
    """One row of the table. ``image`` is ``fn(img, value, rng) -> img``; ``video`` is ``fn(video, value, rng) ->
    (video, frame_map)``; either is None where the attack does not apply. ``kind`` is ``"spatial"``, ``"temporal"`` or
    ``"adversarial"``; ``value`` is how the parameter is written (:data:`NUMBER`, :data:`COUNT`, :data:`COUNT_PLACES`,
    :data:`NONE`); ``low``/``high`` bound a number (None: unchecked here); ``identity`` is the value that changes
    nothing and ``weaker_is`` which direction is milder (for sliders and sweeps)."""

    name: str
    description: str
    kind: str
    value: str
    unit: str
    default: float | str | None
    image: Callable | None = None
    video: Callable | None = None
    low: float | None = None
    high: float | None = None
    identity: float | None = None
    weaker_is: str = "lower"
    sweep: tuple[float, ...] = field(default_factory=tuple)

    @property
    def media(self) -> tuple[str, ...]:
        return tuple(m for m, fn in (("image", self.image), ("video", self.video)) if fn is not None)

    @property
    def adversarial(self) -> bool:
        return self.kind == "adversarial"


ATTACKS: Registry[Attack] = Registry("attack")


def _add(a: Attack) -> None:
    ATTACKS.add(a.name, a, label=a.description, about=f"{a.unit}; {', '.join(a.media)}")


_pf = _vid.per_frame
_add(Attack("jpeg", "JPEG compression (Pillow)", "spatial", NUMBER, "quality", 50, _img.jpeg, _pf(_vid.frame_jpeg),
            10, 100, 100, "higher", (90, 75, 50, 30, 20)))
_add(Attack("noise", "additive Gaussian noise", "spatial", NUMBER, "sigma (0-255)", 8, _img.gaussian_noise,
            _pf(_vid.frame_noise), 0, 40, 0, "lower", (2, 5, 10, 20, 30)))
_add(Attack("blur", "Gaussian blur", "spatial", NUMBER, "kernel (px)", 3, _img.gaussian_blur,
            _pf(_vid.on_uint8(_img.gaussian_blur)), 1, 15, 1, "lower", (3, 5, 7, 9, 11)))
_add(Attack("blur_sigma", "Gaussian blur (standard deviation)", "spatial", NUMBER, "sigma (px)", 0.5,
            _img.gaussian_blur_sigma, _pf(_vid.frame_blur_sigma), 0, 10, 0, "lower", (0.5, 1, 1.5, 2, 3)))
_add(Attack("brightness", "brightness factor", "spatial", NUMBER, "factor", 1.3, _img.brightness,
            _pf(_vid.frame_brightness), 0.3, 2.0, 1.0, "closer to 1", (0.7, 0.85, 1.15, 1.3, 1.5)))
_add(Attack("contrast", "contrast factor", "spatial", NUMBER, "factor", 0.7, _img.contrast,
            _pf(_vid.on_uint8(_img.contrast)), 0.3, 2.0, 1.0, "closer to 1", (0.5, 0.7, 0.85, 1.3, 1.6)))
_add(Attack("resize", "downscale (images stay small, videos scale back)", "spatial", NUMBER, "side scale", 0.5,
            _img.resize_attack, _pf(_vid.frame_resize), 0.2, 1.0, 1.0, "higher", (0.9, 0.75, 0.5, 0.35, 0.25)))
_add(Attack("crop", "crop (area fraction removed)", "spatial", NUMBER, "area removed", 0.25, _img.crop_attack,
            _pf(_vid.frame_crop), 0.0, 0.9, 0.0, "lower", (0.1, 0.25, 0.4, 0.5, 0.6)))
_add(Attack("mp4", "MP4 (mp4v) re-encoding", "spatial", NONE, "", None, None, _vid.mp4))
_add(Attack("drop", "drop K consecutive frames (KxP: at P places)", "temporal", COUNT_PLACES, "frames", "2",
            video=_vid.drop))
_add(Attack("insert", "insert K noise frames (KxP: at P places)", "temporal", COUNT_PLACES, "frames", "2",
            video=_vid.insert))
_add(Attack("swap", "swap P pairs of adjacent frames", "temporal", COUNT, "pairs", 1, video=_vid.swap))
_add(Attack("trim_start", "remove K frames after frame 0", "temporal", COUNT, "frames", 4, video=_vid.trim_start))
_add(Attack("trim_end", "remove the last K frames", "temporal", COUNT, "frames", 4, video=_vid.trim_end))
_add(Attack("clip", "keep frame 0 and K consecutive frames", "temporal", COUNT, "frames", 12, video=_vid.clip))
_add(Attack("fps", "frame-rate change by factor R (nearest frame)", "temporal", NUMBER, "new / old rate", 0.8,
            video=_vid.fps))
_add(Attack("wevade-w", "white-box PGD on the learned decoder, L-inf budget eps (0-255 units): the worst case",
            "adversarial", NUMBER, "eps (0-255)", 8.0, image=white_box_attack))
_add(Attack("wevade-bq", "black-box, query-limited (JPEG initialisation + HopSkipJump on the detector's yes/no answer)",
            "adversarial", NUMBER, "queries", 200.0, image=black_box_attack))

get_attack = ATTACKS.get


def names(medium: str) -> list[str]:
    """The attacks that apply to ``"image"`` or ``"video"``, in table order."""
    return [n for n, a in ATTACKS.items() if medium in a.media]


class Step(NamedTuple):
    """One parsed step: ``value`` is a float (:data:`NUMBER`), an int (:data:`COUNT`), ``(K, P)``
    (:data:`COUNT_PLACES`) or None (:data:`NONE`)."""

    name: str
    value: float | int | tuple[int, int] | None


def _value(a: Attack, text: str, part: str) -> float | int | tuple[int, int] | None:
    try:
        if a.value == NONE:
            return None
        if a.value == COUNT_PLACES:
            k, _, p = text.partition("x")
            return int(float(k)), int(p) if p else 1
        if a.value == COUNT:
            return int(float(text))
        v = float(text)
    except ValueError:
        raise InputError(f"Attack value {text!r} in {part!r} is not a number (write e.g. drop:2x2 or jpeg:50).") from None
    if a.low is not None and a.high is not None and not a.low <= v <= a.high:
        raise InputError(f"{a.name} value {v:g} is outside [{a.low:g}, {a.high:g}] ({a.unit}).")
    return v


def parse_chain(spec: str | None, medium: str = "image") -> list[Step]:
    """``"jpeg:50+resize:0.5"`` -> ``[Step("jpeg", 50.0), Step("resize", 0.5)]``; ``""``/``"none"``/None -> ``[]``.

    Raises InputError naming the attacks valid for ``medium`` on an unknown name, a bad value or one out of range."""
    spec = (spec or "").strip().lower()
    if spec in ("", "none", "clean"):
        return []
    out = []
    for part in spec.split("+"):
        name, _, text = part.strip().partition(":")
        if name not in ATTACKS or medium not in ATTACKS[name].media:
            raise InputError(f"Unknown attack {name!r} in {spec!r}. Valid for {medium}s: "
                             f"{', '.join(names(medium))} (write e.g. jpeg:50+resize:0.5).")
        a = ATTACKS[name]
        out.append(Step(name, _value(a, text, part) if text else _value(a, str(a.default), part)))
    return out


def needs_context(spec: str | None) -> bool:
    """Whether an image chain has an adversarial step (which needs an :class:`AdversarialContext`)."""
    return any(ATTACKS[s.name].adversarial for s in parse_chain(spec, "image"))


def apply_chain(img: np.ndarray, spec: str | None, seed: int = 0,
                context: AdversarialContext | None = None) -> np.ndarray:
    """Apply an attack chain to an ``(H, W, 3)`` uint8 image. Adversarial steps need ``context``."""
    rng = np.random.default_rng(seed)
    out = img
    for name, value in parse_chain(spec, "image"):
        a = ATTACKS[name]
        if not a.adversarial:
            out = a.image(out, value, rng)
        else:
            if context is None:
                raise InputError(f"{name} needs a watermark backend and a user pool (an adversarial attack).")
            out = a.image(out, value, context, seed=int(rng.integers(1 << 31)))
        if min(out.shape[:2]) < 8:
            raise InputError(f"{spec!r} leaves an image of {out.shape[1]} x {out.shape[0]} px; use a milder setting.")
    return out


def apply_video_chain(video: np.ndarray, spec: str | None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Apply an attack chain to a video ``[F, H, W, 3]`` in [0, 1]. Returns (video, frame map into the input's
    frames; -1 marks inserted frames)."""
    video = np.asarray(video, np.float32)
    fmap = np.arange(len(video))
    steps = parse_chain(spec, "video")
    if not steps:
        return video, fmap
    rng = np.random.default_rng(seed)
    for name, value in steps:
        try:
            video, m = ATTACKS[name].video(video, value, rng)
        except ValueError as err:
            if isinstance(err, InputError):
                raise
            raise InputError(f"Bad value for attack {name!r}: {err}") from err
        fmap = np.where(m >= 0, fmap[np.clip(m, 0, None)], -1)
    return video, fmap


__all__ = ["ATTACKS", "AdversarialContext", "Attack", "Step", "apply_chain", "apply_video_chain", "black_box_attack",
           "get_attack", "jpeg_straight_through", "names", "needs_context", "noise_layer", "parse_chain",
           "white_box_attack"]
