"""The pure entry points of Lyra: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_render` ``(RenderConfig, image=None)`` -> :class:`RenderResult`: one first view (a held-out procedural
  scene, or the user's image resized to 32 x 32) and a camera path along the orbit; every method's views along it
  (:data:`METHODS`), PSNR / SSIM per view against the true renders (procedural scenes) or against the teacher's
  views (an upload, which has no truth), and the costs (seconds to make the 3-D representation, to render a view).
- :func:`run_eval` ``(EvalConfig)`` -> :class:`EvalResult`: PSNR / SSIM per held-out scene for every shipped student
  seed, the upper bound, the depth warp and the teacher, at the held-out offsets :data:`views.EVAL_DELTAS` (the claim
  tests and the page's evaluation table).

The configs are frozen and check themselves (:class:`backend.errors.InputError`); the results are small JSON-able
dataclasses (images as uint8 arrays, left out of ``to_dict`` unless asked). ``models`` may be passed in already
loaded (the page caches them); None loads the shipped ones.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from ...errors import InputError
from ...registry import Registry
from ...runtime import ASSETS, CancelToken, Progress, checked, report

ASSET_FILES = {
    "teacher": ASSETS / "lyra_teacher.safetensors",
    "student": ASSETS / "lyra_student_s{seed}.safetensors",
    "upper": ASSETS / "lyra_upper_s{seed}.safetensors",
}
MADE_BY = "python -m backend.train lyra"
STUDENT_SEEDS = (0, 1, 2)
UPPER_SEEDS = (0,)
PATHS = ("orbit", "left", "right")
MAX_VIEWS, MAX_STEPS = 16, 400


@dataclass
class Models:
    """The shipped networks: the frozen teacher, its depth network (also the warp baseline's), students ``{seed: Student}`` trained on the
    teacher's views and ``upper {seed: Student}`` trained on true renders."""

    teacher: Any
    depth: Any
    students: dict[int, Any]
    upper: dict[int, Any]


def _file(kind: str, seed: int | None = None):
    p = ASSET_FILES[kind]
    return p.with_name(p.name.replace("{seed}", str(seed))) if seed is not None else p


def load_models(student_seeds=STUDENT_SEEDS, upper_seeds=UPPER_SEEDS) -> Models:
    """Load the shipped float16 networks (InputError naming the training command when a file is missing)."""
    from ... import weights
    from .distill import load_half
    from .models import NetConfig, Student, Teacher

    def get(kind: str, seed: int | None = None) -> tuple[dict, Any]:
        p = _file(kind, seed)
        if not p.is_file():
            raise InputError(f"The Lyra weights {p.name} are missing: run `{MADE_BY}`.")
        return weights.load(p, made_by=MADE_BY)

    def cfg_of(meta: Any) -> NetConfig:
        c = meta.config
        return NetConfig(tuple(c["widths"]), c["latent"], c["mixer"], c["gaussians_per_pixel"], c["stride"])

    t, meta = get("teacher")
    cfg = cfg_of(meta)
    teacher = load_half(Teacher(cfg), t)
    depth = teacher.depth
    students = {s: load_half(Student(cfg), get("student", s)[0]) for s in student_seeds}
    upper = {s: load_half(Student(cfg), get("upper", s)[0]) for s in upper_seeds}
    return Models(teacher, depth, students, upper)


@lru_cache(maxsize=1)
def shipped_models() -> Models:
    """The shipped networks, loaded once per process."""
    return load_models()


# ------------------------------------------------------------------------------------------------------ methods
@dataclass
class Context:
    """What a method gets: the first view ``image [1, 3, H, W]``, the path ``deltas [V]`` (degrees), the models,
    the student seed and the per-scene optimisation steps."""

    image: torch.Tensor
    deltas: torch.Tensor
    models: Models
    seed: int = 0
    steps: int = 60


@dataclass
class Views:
    """A method's views ``[V, 3, H, W]`` and its costs: ``build_s`` (seconds to make the 3-D representation: one
    forward pass, a depth map, or per-scene optimisation), ``render_s`` (seconds per rendered view), ``gaussians``."""

    images: torch.Tensor
    build_s: float
    render_s: float
    gaussians: int = 0


def _render(g: Any, ctx: Context) -> tuple[torch.Tensor, float]:
    from .views import render_at, sky_colour

    t = time.perf_counter()
    with torch.no_grad():
        out = render_at(g, ctx.deltas[None], sky_colour(ctx.image), ctx.image.shape[-1])[0]
    return out, (time.perf_counter() - t) / max(1, len(ctx.deltas))


def _student_views(student: Any, ctx: Context) -> Views:
    from .distill import student_gaussians

    t = time.perf_counter()
    with torch.no_grad():
        g = student_gaussians(student, ctx.models.teacher, ctx.image)
    build = time.perf_counter() - t
    out, per = _render(g, ctx)
    return Views(out, build, per, len(g))


def student_views(ctx: Context) -> Views:
    """Lyra's student: one forward pass from the first view (and the teacher's latent) to Gaussians, rendered."""
    if ctx.seed not in ctx.models.students:
        raise InputError(f"No shipped student of seed {ctx.seed}; seeds: {sorted(ctx.models.students)}.")
    return _student_views(ctx.models.students[ctx.seed], ctx)


def upper_views(ctx: Context) -> Views:
    """The same student trained on true renders instead of the teacher's views (the upper bound)."""
    seed = ctx.seed if ctx.seed in ctx.models.upper else min(ctx.models.upper)
    return _student_views(ctx.models.upper[seed], ctx)


def warp_views(ctx: Context) -> Views:
    """The first view splatted at the depth network's depth into every view of the path."""
    from .models import depth_warp_gaussians
    from .views import intrinsics

    t = time.perf_counter()
    with torch.no_grad():
        g = depth_warp_gaussians(ctx.image, ctx.models.depth(ctx.image), intrinsics(ctx.image.shape[-1]))
    build = time.perf_counter() - t
    out, per = _render(g, ctx)
    return Views(out, build, per, len(g))


def generator_views(ctx: Context) -> Views:
    """The frozen teacher's imagined views (2-D, one network call per view: what the student is distilled from)."""
    t = time.perf_counter()
    with torch.no_grad():
        out = ctx.models.teacher(ctx.image.expand(len(ctx.deltas), -1, -1, -1), ctx.deltas)
    return Views(out, 0.0, (time.perf_counter() - t) / max(1, len(ctx.deltas)))


def per_scene_views(ctx: Context) -> Views:
    """Per-scene optimisation of Gaussians on the teacher's views of the training path (PATH_DELTAS), from the
    depth warp's discs, for ``ctx.steps`` Adam steps."""
    from .evaluate import optimise_scene
    from .views import PATH_DELTAS

    path = torch.tensor([d for d in PATH_DELTAS if d != 0.0])
    t = time.perf_counter()
    with torch.no_grad():
        tv = ctx.models.teacher(ctx.image.expand(len(path), -1, -1, -1), path)
    res = optimise_scene(ctx.image[0], tv, path, ctx.models.depth, steps=ctx.steps)
    build = time.perf_counter() - t
    out, per = _render(res.gaussians, ctx)
    return Views(out, build, per, len(res.gaussians))


per_scene_views.slow = True  # type: ignore[attr-defined]  # seconds, not milliseconds: off by default

METHODS: Registry[Callable[[Context], Views]] = Registry("Lyra method")
METHODS.add("lyra", student_views, label="Lyra student (ours)", kind="ours",
            about="one forward pass: first view (+ teacher latent) -> 3-D Gaussians, trained only on teacher views")
METHODS.add("warp", warp_views, label="Depth warp of the first view", kind="baseline",
            about="the first view splatted at a monocular depth network's depth")
METHODS.add("per_scene", per_scene_views, label="Per-scene optimisation on the teacher's views", kind="baseline",
            about="Adam on every Gaussian parameter, fitted to the teacher's 8 path views of this scene")
METHODS.add("upper_bound", upper_views, label="Student on true renders (upper bound)", kind="reference",
            about="the same student trained on true multi-view renders, which Lyra never sees")
METHODS.add("teacher_views", generator_views, label="Teacher's views (2-D, distilled)", kind="reference",
            about="the frozen camera-conditioned generator's imagined views, one call per view")


def fast_methods() -> list[str]:
    """The methods that take milliseconds (every one but those marked ``slow``): the default."""
    return [k for k in METHODS if not getattr(METHODS.get(k), "slow", False)]


def path_deltas(path: str, views: int) -> list[float]:
    """The offsets (degrees) of a named path: ``orbit`` -35..35, ``left`` -40..0, ``right`` 0..40."""
    lo, hi = {"orbit": (-35.0, 35.0), "left": (-40.0, 0.0), "right": (0.0, 40.0)}[path]
    return [round(float(x), 3) for x in np.linspace(lo, hi, views)]


# ------------------------------------------------------------------------------------------------------ render job
@dataclass(frozen=True)
class RenderConfig:
    """One first view and a path: ``scene`` (a held-out scene index, used when no image is given), ``path`` (a named
    path of ``views`` offsets) or explicit ``deltas`` (degrees, |d| <= 40), the student ``seed``, the ``methods`` to
    run (comma-separated names, ``all``, or ``fast``: every method but per-scene optimisation) and ``steps`` of
    per-scene optimisation."""

    scene: int = 0
    path: str = "orbit"
    views: int = 8
    deltas: tuple[float, ...] = ()
    seed: int = 0
    methods: str = "fast"
    steps: int = 30

    def __post_init__(self) -> None:
        from ...registry import choose
        from .views import MAX_DELTA

        if not 0 <= int(self.scene) < 100_000:
            raise InputError(f"The scene index must be 0-99999; got {self.scene}.")
        object.__setattr__(self, "path", choose(self.path, PATHS, "camera path"))
        if not 1 <= int(self.views) <= MAX_VIEWS:
            raise InputError(f"The number of views must be 1-{MAX_VIEWS}; got {self.views}.")
        d = tuple(float(x) for x in self.deltas)
        if len(d) > MAX_VIEWS or any(not np.isfinite(x) or abs(x) > MAX_DELTA for x in d):
            raise InputError(f"Offsets must be at most {MAX_VIEWS} angles within +-{MAX_DELTA:g} degrees.")
        object.__setattr__(self, "deltas", d)
        if int(self.seed) not in STUDENT_SEEDS:
            raise InputError(f"The student seed must be one of {STUDENT_SEEDS}; got {self.seed}.")
        names = fast_methods() if str(self.methods).strip().lower() == "fast" else METHODS.keys_of(self.methods)
        object.__setattr__(self, "methods", ",".join(names))
        if not 1 <= int(self.steps) <= MAX_STEPS:
            raise InputError(f"Per-scene optimisation steps must be 1-{MAX_STEPS}; got {self.steps}.")

    def offsets(self) -> list[float]:
        return list(self.deltas) if self.deltas else path_deltas(self.path, self.views)


@dataclass
class RenderResult:
    """Per method: views (uint8 ``[V, H, W, 3]``), PSNR / SSIM per view (against ``reference``: ``truth`` for a
    procedural scene, ``teacher`` for an upload), their means and the costs."""

    config: dict
    deltas: list[float]
    reference: str
    labels: dict[str, str]
    psnr: dict[str, list[float]]
    ssim: dict[str, list[float]]
    mean_psnr: dict[str, float]
    mean_ssim: dict[str, float]
    costs: dict[str, dict[str, float]]
    first: np.ndarray | None = None
    truth: np.ndarray | None = None
    images: dict[str, np.ndarray] = field(default_factory=dict)
    source: str = ""
    reference_images: np.ndarray | None = None

    def to_dict(self, images: bool = False) -> dict:
        out = {k: v for k, v in asdict(self).items() if k not in ("first", "truth", "images", "reference_images")}
        if images:
            out["images"] = {k: v.tolist() for k, v in self.images.items()}
        return out


def _to_uint8(x: torch.Tensor) -> np.ndarray:
    return (x.clamp(0, 1).permute(0, 2, 3, 1).numpy() * 255 + 0.5).astype(np.uint8)


def prepare_image(image: Any, size: int = 32) -> tuple[torch.Tensor, str]:
    """An uploaded image (PIL or uint8 ``[H, W, 3]``) as a first view ``[1, 3, size, size]``: centre-cropped to a
    square and resized (with a note saying so)."""
    from PIL import Image

    im = image if isinstance(image, Image.Image) else Image.fromarray(np.asarray(image, dtype=np.uint8))
    im = im.convert("RGB")
    w, h = im.size
    s = min(w, h)
    note = f"cropped to the central {s} x {s} square and resized from {w} x {h} to {size} x {size} pixels"
    im = im.crop(((w - s) // 2, (h - s) // 2, (w - s) // 2 + s, (h - s) // 2 + s)).resize((size, size),
                                                                                          Image.BILINEAR)
    arr = np.asarray(im, dtype=np.float32) / 255.0
    return torch.as_tensor(arr).permute(2, 0, 1)[None].contiguous(), note


def run_render(config: RenderConfig, image: Any = None, models: Models | None = None,
               progress: Progress | None = None, token: CancelToken | None = None) -> RenderResult:
    """Every chosen method's views along the path from one first view (see the module docstring)."""
    from .evaluate import psnr, ssim
    from .views import EVAL_SEEDS, SIZE, render_views

    progress = checked(progress, token)
    models = models or shipped_models()
    deltas = config.offsets()
    d = torch.tensor(deltas, dtype=torch.float32)
    truth = None
    if image is None:
        seed = EVAL_SEEDS[int(config.scene)]
        rgb, _ = render_views(seed, [0.0, *deltas], SIZE)
        first = torch.as_tensor(rgb[0]).permute(2, 0, 1)[None].contiguous()
        truth = torch.as_tensor(rgb[1:]).permute(0, 3, 1, 2).contiguous()
        source = f"held-out procedural scene {config.scene} (scene seed {seed})"
    else:
        first, note = prepare_image(image, SIZE)
        source = f"uploaded image, {note}; no true views: metrics compare with the teacher's views"
    ctx = Context(first, d, models, int(config.seed), int(config.steps))
    methods = METHODS.keys_of(config.methods)
    out: dict[str, Views] = {}
    for i, name in enumerate(methods):
        report(progress, i / len(methods), f"{METHODS.label(name)}")
        out[name] = METHODS.get(name)(ctx)
    # an upload has no true views: the methods are compared with the teacher's views (the teacher itself is not scored)
    ref = truth if truth is not None else generator_views(ctx).images
    scored = [k for k in out if truth is not None or METHODS.get(k) is not generator_views]
    p = {k: [round(float(x), 3) for x in psnr(out[k].images, ref)] for k in scored}
    s = {k: [round(float(x), 4) for x in ssim(out[k].images, ref)] for k in scored}
    costs = {k: {"build_s": round(v.build_s, 5), "render_s_per_view": round(v.render_s, 5),
                 "gaussians": int(v.gaussians)} for k, v in out.items()}
    report(progress, 1.0, "done")
    return RenderResult(
        config=asdict(config), deltas=deltas, reference="truth" if truth is not None else "teacher",
        labels={k: METHODS.label(k) for k in out}, psnr=p, ssim=s,
        mean_psnr={k: round(float(np.mean(v)), 3) for k, v in p.items()},
        mean_ssim={k: round(float(np.mean(v)), 4) for k, v in s.items()}, costs=costs,
        first=_to_uint8(first)[0], truth=_to_uint8(truth) if truth is not None else None,
        images={k: _to_uint8(v.images) for k, v in out.items()}, source=source,
        reference_images=_to_uint8(ref) if truth is None else None)


# ------------------------------------------------------------------------------------------------------ evaluation
def method_key(fn: Callable[[Context], Views]) -> str:
    """The registry name of a method function."""
    return next(e.name for e in METHODS.entries() if e.obj is fn)


@dataclass(frozen=True)
class EvalConfig:
    """Held-out evaluation: ``scenes`` held-out scenes from index ``start``, at the held-out offsets."""

    scenes: int = 12
    start: int = 0

    def __post_init__(self) -> None:
        if not 1 <= int(self.scenes) <= 400:
            raise InputError(f"The number of held-out scenes must be 1-400; got {self.scenes}.")
        if not 0 <= int(self.start) <= 10_000:
            raise InputError(f"The first scene index must be 0-10000; got {self.start}.")


@dataclass
class EvalResult:
    """Per arm (``lyra_s{seed}``, ``upper_bound_s{seed}``, ``warp``, ``teacher_views``): PSNR and SSIM per scene (averaged
    over the held-out views) and their means."""

    config: dict
    deltas: list[float]
    psnr: dict[str, list[float]]
    ssim: dict[str, list[float]]
    mean_psnr: dict[str, float]
    mean_ssim: dict[str, float]
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


def run_eval(config: EvalConfig, models: Models | None = None, progress: Progress | None = None,
             token: CancelToken | None = None) -> EvalResult:
    """PSNR / SSIM per held-out scene of every shipped arm (see the module docstring)."""
    from .distill import student_gaussians, teacher_views
    from .evaluate import depth_warp, psnr, ssim
    from .views import EVAL_DELTAS, EVAL_SEEDS, make_viewset, render_at, sky_colour

    progress = checked(progress, token)
    t0 = time.perf_counter()
    models = models or shipped_models()
    seeds = EVAL_SEEDS[int(config.start):int(config.start) + int(config.scenes)]
    report(progress, 0.0, "rendering the held-out scenes")
    ev = make_viewset(seeds, deltas=EVAL_DELTAS)
    preds: dict[str, torch.Tensor] = {}
    with torch.no_grad():
        for group, nets in ((method_key(student_views), models.students), (method_key(upper_views), models.upper)):
            for s, net in nets.items():
                report(progress, 0.2, f"{group} seed {s}")
                g = student_gaussians(net, models.teacher, ev.first)
                preds[f"{group}_s{s}"] = render_at(g, ev.deltas, sky_colour(ev.first), ev.first.shape[-1])
        preds[method_key(warp_views)] = depth_warp(ev.first, models.depth(ev.first), ev.deltas)
        preds[method_key(generator_views)] = teacher_views(models.teacher, ev)
    p = {k: [round(float(x), 4) for x in psnr(v, ev.targets).mean(1)] for k, v in preds.items()}
    s = {k: [round(float(x), 5) for x in ssim(v, ev.targets).mean(1)] for k, v in preds.items()}
    report(progress, 1.0, "done")
    return EvalResult(asdict(config), list(EVAL_DELTAS), p, s,
                      {k: round(float(np.mean(v)), 3) for k, v in p.items()},
                      {k: round(float(np.mean(v)), 4) for k, v in s.items()}, round(time.perf_counter() - t0, 2))
