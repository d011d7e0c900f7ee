"""Self-re-watermarking: the attack on image watermarks, and its evaluation against the Lipschitz-constrained defense.

Paper: "The Self-Re-Watermarking Trap: From Exploit to Resilience", Senthuran, Xiang, Natgunanathan, Thayasivam,
ICLR 2026 (OpenReview st1hrLTP14). The defended model and its training are in :mod:`.lipschitz`.

Threat model: the attacker holds the owner's watermark encoder (white-box) and re-embeds a message B of their own into an
image already watermarked with A, once or several times; the owner's decoder should still read A. Three attacks, each
reported with the attacker's own success on B (a model must not look robust just by refusing to re-mark):

- :func:`rewatermark` with the same encoder (self-re-watermarking, the paper's attack), ``rounds`` times with B;
- :func:`rewatermark` with another trained encoder (cross-model re-watermarking); its success on B is read by the
  attacker's own decoder;
- :func:`pgd_overwrite`: a targeted L-inf PGD on the owner's decoder toward B (the paper's test settings
  (eps, step, iterations) = (0.03, 0.007, 50) and (0.04, 0.01, 100), in units of the [-1, 1] image range, i.e. half
  of that in [0, 1] units); only for differentiable (learned) backends.

Victims (:func:`get_model`): the shipped SRW-family variants of :mod:`.lipschitz` (``plain`` is the undefended twin,
``srw`` the defended one, ``sn``/``reemb``/``sn_reemb`` the ablation), every learned backend of the watermark registry
(:mod:`backend.watermark.registry`: ``tinyhidden``) and its classical DWT-DCT baselines (``dwtDctSvd``, ``dwtDct``, images of at least
256 x 256) as references.

Images are ``(H, W, 3)`` uint8 numpy arrays (re-watermarked images are rounded to 8 bits between rounds, as files would
be); bits are ``(n,)`` uint8.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import numpy as np

from backend.errors import InputError
from backend.registry import Registry
from backend.runtime import Progress, report, sub_progress
from backend.watermark.rewatermark import lipschitz as L

SRW_VARIANTS = tuple(L.VARIANTS)


@dataclass(frozen=True)
class Victim:
    """A registry row, called with ``tiles`` to get the backend (``embed``, ``decode_batch``, ``n_bits``,
    ``min_side``, ``label``; learned ones also ``decoder_logits``). ``name`` is the model's exact spelling (the
    watermark registry's classical names are case-sensitive; registry keys are lower-case); ``shipped``: a shipped
    SRW-family variant of :mod:`.lipschitz` (else a backend of :mod:`backend.watermark.registry`)."""

    name: str
    shipped: bool

    def __call__(self, tiles: int = L.TILES):
        if self.shipped:
            return SRWBackend(self.name, tiles)
        from backend.watermark.registry import get_method

        return get_method(self.name)


MODELS: Registry[Victim] = Registry("re-watermarking model")
MODELS.add("plain", Victim("plain", shipped=True), label="plain (no constraint, no adversarial terms: the victim)",
           kind="baseline", color="#1f77b4")
MODELS.add("sn", Victim("sn", shipped=True), label="spectral norm only", kind="ablation")
MODELS.add("reemb", Victim("reemb", shipped=True), label="re-embedding loss only", kind="ablation")
MODELS.add("sn_reemb", Victim("sn_reemb", shipped=True), label="spectral norm + re-embedding loss", kind="ablation")
MODELS.add("srw", Victim("srw", shipped=True), label="SRW: spectral norm + re-embedding + PGD losses (defended)",
           kind="ours", color="#d62728")
MODELS.add("tinyhidden", Victim("tinyhidden", shipped=False),
           label="TinyHiDDeN of the attribution page (registry, learned, undefended)", kind="baseline")
MODELS.add("dwtDctSvd", Victim("dwtDctSvd", shipped=False),
           label="invisible-watermark DWT-DCT-SVD (registry, classical reference)", kind="reference")
MODELS.add("dwtDct", Victim("dwtDct", shipped=False),
           label="invisible-watermark DWT-DCT (registry, classical reference)", kind="reference")
assert {k for k in MODELS if MODELS[k].shipped} == set(SRW_VARIANTS)


def model_names() -> list[str]:
    """Every victim/attacker name in its exact spelling, in table order."""
    return [MODELS[k].name for k in MODELS]


# the default other trained encoder a cross-model attacker uses
CROSS_ATTACKER = {"tinyhidden": "plain"}
DEFAULT_CROSS = "tinyhidden"
PGD_TEST = ((0.03, 0.007, 50), (0.04, 0.01, 100))  # paper's test settings, [-1, 1] units
MIN_SIDE = 32
MAX_PIXELS = 4_200_000


class SRWBackend:
    """A shipped SRW-family model behind the registry interface (``embed``, ``decode_batch``, ``decoder_logits``);
    ``tiles`` frames per side of the any-size path (:data:`.lipschitz.TILES`; 1 frames the whole image once)."""

    differentiable = True
    min_side = MIN_SIDE

    def __init__(self, variant: str, tiles: int = L.TILES):
        self.model = L.load(L.weights_path(variant))
        self.name = variant
        self.tiles = int(tiles)
        self.n_bits = self.model.cfg.n_bits
        self.label = MODELS.label(variant)
        self.weights = L.weights_path(variant)

    def embed(self, img: np.ndarray, bits: np.ndarray, target_psnr: float | None = None) -> np.ndarray:
        import torch

        from backend.watermark.learned import to_tensor, to_uint8

        b = torch.from_numpy(np.asarray(bits, np.float32).reshape(1, -1))
        with torch.no_grad():
            return to_uint8(self.model.embed(to_tensor(img), b, target_psnr, tiles=self.tiles))

    def logits_batch(self, imgs: list[np.ndarray]) -> np.ndarray:
        import torch

        from backend.watermark.learned import to_tensor

        side = self.model.cfg.size * self.tiles
        with torch.no_grad():
            frames = torch.cat([L.resize(to_tensor(im), (side, side)) for im in imgs])
            return self.model.decode_logits(frames, tiles=self.tiles).numpy()

    def decode_batch(self, imgs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        return (self.logits_batch(imgs) > 0).astype(np.uint8), np.ones(len(imgs), bool)

    def decoder_logits(self, images):
        return self.model.decode_logits(images, tiles=self.tiles)


def get_model(name: str, tiles: int = L.TILES):
    """A victim/attacker backend by name (see :data:`MODELS`, case-insensitive); the InputError lists valid names.
    ``tiles`` (SRW-family models only) is the number of 32 x 32 frames per side of the any-size path."""
    if not 1 <= int(tiles) <= 8:
        raise InputError(f"tiles must be between 1 and 8 frames per side, got {tiles}.")
    return _get_model(MODELS.get(name).name, int(tiles))


@functools.lru_cache(maxsize=32)
def _get_model(name: str, tiles: int = L.TILES):
    return MODELS[name](tiles)


get_model.cache_clear = _get_model.cache_clear  # type: ignore[attr-defined]  # tests swap the weights folder


def available_models() -> list[str]:
    """Models whose weights are present (SRW variants need their shipped safetensors)."""
    return [m for m in model_names() if not MODELS[m].shipped or L.weights_path(m).is_file()]


def check_image(img: np.ndarray, min_side: int = MIN_SIDE) -> np.ndarray:
    """Validate an ``(H, W, 3)`` uint8 image for this page (InputError with what to change)."""
    a = np.asarray(img)
    if a.ndim != 3 or a.shape[-1] != 3 or a.dtype != np.uint8:
        raise InputError("Expected an RGB image (8 bits per channel).")
    h, w = a.shape[:2]
    if min(h, w) < min_side:
        raise InputError(f"The image is {w} x {h} px; at least {min_side} px per side are needed.")
    if h * w > MAX_PIXELS:
        raise InputError(f"The image is {w} x {h} px ({h * w / 1e6:.1f} MP); the limit is {MAX_PIXELS / 1e6:.1f} MP.")
    return a


def _decode(backend, img: np.ndarray) -> np.ndarray | None:
    bits, ok = backend.decode_batch([img])
    return bits[0] if ok[0] else None


def _acc(decoded: np.ndarray | None, ref: np.ndarray) -> float:
    """Bit accuracy; an undecodable image (classical backend, too small) counts as chance (0.5)."""
    return 0.5 if decoded is None else float(np.mean(decoded == ref))


# ------------------------------------------------------------------------------------------------------ attacks
def rewatermark(attacker, img_w: np.ndarray, bits_b: np.ndarray, rounds: int = 1) -> list[np.ndarray]:
    """Re-embed ``bits_b`` with the attacker's encoder ``rounds`` times; returns the image after each round."""
    out, cur = [], img_w
    for _ in range(int(rounds)):
        cur = attacker.embed(cur, bits_b)
        out.append(cur)
    return out


def pgd_overwrite(victim, img_w: np.ndarray, bits_b: np.ndarray, eps: float, step: float, iters: int) -> np.ndarray:
    """Targeted L-inf PGD on the victim's decoder toward ``bits_b``; ``eps``/``step`` in units of the [-1, 1] range
    (the paper's), so the [0, 1] budget is ``eps / 2``. Returns the 8-bit attacked image."""
    import torch

    from backend.watermark.learned import to_tensor, to_uint8

    if not getattr(victim, "differentiable", False):
        raise InputError(f"PGD overwrite needs a differentiable decoder; {victim.name} is classical.")
    x = to_tensor(img_w)
    target = torch.from_numpy(np.asarray(bits_b, np.float32).reshape(1, -1))
    adv = L.pgd_overwrite(victim.decoder_logits, x, target, eps / 2, step / 2, iters, lo=0.0, hi=1.0)
    return to_uint8(adv)


# --------------------------------------------------------------------------------------------------- one image
@dataclass
class Story:
    """One image through the attacks for one victim model. Accuracies vs A (recovery) and vs B (attacker success)."""

    model: str
    label: str
    n_bits: int
    bits_a: np.ndarray
    bits_b: np.ndarray
    images: dict[str, np.ndarray]  # x, x_w, rw1..rwK, cross, pgd
    acc_clean: float
    acc_a: list[float]  # after rounds 1..K (self)
    acc_b: list[float]
    psnr: dict[str, float]
    ssim: dict[str, float]
    cross: dict[str, object] = field(default_factory=dict)
    pgd: dict[str, object] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def run_story(model: str, img: np.ndarray, rounds: int = 3, seed: int = 0, cross_attacker: str | None = None,
              pgd: tuple[float, float, int] | None = PGD_TEST[0], progress: Progress | None = None,
              tiles: int = L.TILES) -> Story:
    """Embed A with ``model``; self-re-watermark B ``rounds`` times; cross-model re-watermark once with
    ``cross_attacker`` (default: :data:`CROSS_ATTACKER`); PGD overwrite toward B at ``pgd`` = (eps, step, iters).
    ``tiles``: frames per side of the SRW-family models' any-size path (victim, self and cross attackers alike)."""
    from backend.watermark.metrics import psnr, ssim

    victim = get_model(model, tiles)
    img = check_image(img, victim.min_side)
    if not 1 <= rounds <= 10:
        raise InputError(f"rounds must be between 1 and 10, got {rounds}.")
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, victim.n_bits).astype(np.uint8)
    b = rng.integers(0, 2, victim.n_bits).astype(np.uint8)
    t = time.perf_counter()
    x_w = victim.embed(img, a)
    secs = {"embed": time.perf_counter() - t}
    t = time.perf_counter()
    acc_clean = _acc(_decode(victim, x_w), a)
    secs["decode"] = time.perf_counter() - t
    report(progress, 0.15, f"{model}: embedded A")
    rws = rewatermark(victim, x_w, b, rounds)
    dec = [_decode(victim, im) for im in rws]
    images = {"x": img, "x_w": x_w, **{f"rw{k + 1}": im for k, im in enumerate(rws)}}
    story = Story(model, victim.label, victim.n_bits, a, b, images, acc_clean, [_acc(d, a) for d in dec],
                  [_acc(d, b) for d in dec],
                  {"x_w": psnr(img, x_w), "rw1": psnr(img, rws[0]), "rw1_vs_x_w": psnr(x_w, rws[0])},
                  {"x_w": ssim(img, x_w), "rw1": ssim(img, rws[0])}, seconds=secs)
    report(progress, 0.45, f"{model}: {rounds} self-re-watermarking rounds")
    cross = cross_attacker or CROSS_ATTACKER.get(model, DEFAULT_CROSS)
    if cross and cross != model:
        att = get_model(cross, tiles)
        if min(img.shape[:2]) >= att.min_side:
            b2 = rng.integers(0, 2, att.n_bits).astype(np.uint8)
            xc = rewatermark(att, x_w, b2, 1)[0]
            story.images["cross"] = xc
            story.cross = {"attacker": cross, "acc_a": _acc(_decode(victim, xc), a),
                           "attacker_acc_b": _acc(_decode(att, xc), b2), "psnr": psnr(img, xc)}
    report(progress, 0.6, f"{model}: cross-model re-watermark")
    if pgd is not None and getattr(victim, "differentiable", False):
        eps, step, iters = pgd
        xp = pgd_overwrite(victim, x_w, b, eps, step, iters)
        story.images["pgd"] = xp
        dp = _decode(victim, xp)
        story.pgd = {"eps": eps, "step": step, "iters": iters, "acc_a": _acc(dp, a), "acc_b": _acc(dp, b),
                     "psnr": psnr(img, xp)}
    report(progress, 1.0, f"{model}: done")
    return story


def story_rows(story: Story) -> list[dict[str, object]]:
    """Per-stage table rows: stage, accuracy vs A, vs B, PSNR vs the original."""
    from backend.watermark.metrics import psnr

    x = story.images["x"]
    rows = [{"model": story.model, "stage": "watermarked (A)", "bit acc A": story.acc_clean, "bit acc B": None,
             "PSNR vs original": story.psnr["x_w"]}]
    for k, (aa, ab) in enumerate(zip(story.acc_a, story.acc_b, strict=True)):
        rows.append({"model": story.model, "stage": f"self re-watermark round {k + 1}", "bit acc A": aa,
                     "bit acc B": ab, "PSNR vs original": psnr(x, story.images[f"rw{k + 1}"])})
    if story.cross:
        rows.append({"model": story.model, "stage": f"cross-model ({story.cross['attacker']})",
                     "bit acc A": story.cross["acc_a"], "bit acc B": story.cross["attacker_acc_b"],
                     "PSNR vs original": story.cross["psnr"]})
    if story.pgd:
        rows.append({"model": story.model, "stage": f"PGD overwrite eps {story.pgd['eps']}",
                     "bit acc A": story.pgd["acc_a"], "bit acc B": story.pgd["acc_b"],
                     "PSNR vs original": story.pgd["psnr"]})
    return rows


def decoded_stages(story: Story, tiles: int = L.TILES) -> dict[str, np.ndarray]:
    """The victim's decoded bits ``(n,)`` of every image of the story except the original (watermarked, each round,
    cross-model, PGD)."""
    victim = get_model(story.model, tiles)
    return {k: victim.decode_batch([im])[0][0] for k, im in story.images.items() if k != "x"}


def distortion_accuracy(story: Story, distortions: tuple[str, ...], seed: int = 0,
                        tiles: int = L.TILES) -> dict[str, float]:
    """Bit accuracy on A of the watermarked image after each common distortion (attack chains of
    :mod:`backend.watermark.attacks`, e.g. ``jpeg:75``), seeded by ``seed``."""
    from backend.watermark.attacks import apply_chain
    from backend.watermark.metrics import bit_accuracy

    victim = get_model(story.model, tiles)
    return {d: float(bit_accuracy(victim.decode_batch([apply_chain(story.images["x_w"], d, seed=seed)])[0][0],
                                  story.bits_a)) for d in distortions}


# ------------------------------------------------------------------------------------------------ evaluation
@dataclass(frozen=True)
class EvalConfig:
    """Settings of :func:`evaluate` (held-out images; eps in [-1, 1] units as in the paper)."""

    rounds: int = 5
    pgd_eps: tuple[float, ...] = (0.01, 0.03, 0.06)
    pgd_iters: int = 50
    distortions: tuple[str, ...] = ("jpeg:75", "blur:5", "noise:8")
    matched_psnr: float | None = 34.0
    cross: bool = True
    seed: int = 0
    tiles: int = L.TILES  # frames per side of the SRW-family models' any-size path


def evaluate(models: list[str], images: list[np.ndarray], cfg: EvalConfig | None = None,
             progress: Progress | None = None, names: list[str] | None = None) -> dict[str, dict]:
    """Mean metrics per model over ``images``: clean accuracy, PSNR/SSIM, recovery and attacker success after each
    self-re-watermarking round, cross-model re-watermarking, PGD overwrite vs eps, distortions (at the model's own
    strength and at ``matched_psnr`` for the learned models), embed/decode times. With ``names`` (one per image) each
    model's result also holds ``per_image`` (one row per image: the same metrics) and ``worst`` (the names of the
    images with the lowest clean accuracy, then the lowest accuracy on A after the last round)."""
    from backend.watermark.attacks import apply_chain
    from backend.watermark.metrics import psnr, ssim

    cfg = cfg or EvalConfig()
    out: dict[str, dict] = {}
    for mi, name in enumerate(models):
        prog = sub_progress(progress, mi / len(models), (mi + 1) / len(models))
        victim = get_model(name, cfg.tiles)
        keep = [i for i, im in enumerate(images) if min(im.shape[:2]) >= victim.min_side]
        imgs = [images[i] for i in keep]
        img_names = [names[i] for i in keep] if names is not None else None
        per_image: list[dict] = []
        if not imgs:
            raise InputError(f"No image is large enough for {name} (at least {victim.min_side} px per side).")
        rng = np.random.default_rng(cfg.seed)
        cross_name = CROSS_ATTACKER.get(name, DEFAULT_CROSS) if cfg.cross else None
        att = get_model(cross_name, cfg.tiles) if cross_name and cross_name != name else None
        acc = {"clean": [], "psnr": [], "ssim": [], "psnr_rw1": [], "ssim_rw1": [], "embed_s": [], "decode_s": []}
        ra = np.zeros((len(imgs), cfg.rounds))
        rb = np.zeros((len(imgs), cfg.rounds))
        cross_a, cross_b = [], []
        pgd_a = np.full((len(imgs), len(cfg.pgd_eps)), np.nan)
        pgd_b = np.full((len(imgs), len(cfg.pgd_eps)), np.nan)
        dist: dict[str, list[float]] = {d: [] for d in cfg.distortions}
        dist_m: dict[str, list[float]] = {d: [] for d in cfg.distortions}
        psnr_m: list[float] = []
        for i, img in enumerate(imgs):
            a = rng.integers(0, 2, victim.n_bits).astype(np.uint8)
            b = rng.integers(0, 2, victim.n_bits).astype(np.uint8)
            t = time.perf_counter()
            xw = victim.embed(img, a)
            acc["embed_s"].append(time.perf_counter() - t)
            t = time.perf_counter()
            acc["clean"].append(_acc(_decode(victim, xw), a))
            acc["decode_s"].append(time.perf_counter() - t)
            acc["psnr"].append(psnr(img, xw))
            acc["ssim"].append(ssim(img, xw))
            rws = rewatermark(victim, xw, b, cfg.rounds)
            for k, im in enumerate(rws):
                d = _decode(victim, im)
                ra[i, k], rb[i, k] = _acc(d, a), _acc(d, b)
            acc["psnr_rw1"].append(psnr(img, rws[0]))
            acc["ssim_rw1"].append(ssim(img, rws[0]))
            row_cross = None
            if att is not None and min(img.shape[:2]) >= att.min_side:
                b2 = rng.integers(0, 2, att.n_bits).astype(np.uint8)
                xc = att.embed(xw, b2)
                cross_a.append(_acc(_decode(victim, xc), a))
                cross_b.append(_acc(_decode(att, xc), b2))
                row_cross = cross_a[-1]
            if getattr(victim, "differentiable", False):
                for j, eps in enumerate(cfg.pgd_eps):
                    xp = pgd_overwrite(victim, xw, b, eps, max(eps / 4, 1e-4), cfg.pgd_iters)
                    d = _decode(victim, xp)
                    pgd_a[i, j], pgd_b[i, j] = _acc(d, a), _acc(d, b)
            for dname in cfg.distortions:
                dist[dname].append(_acc(_decode(victim, apply_chain(xw, dname, seed=cfg.seed + i)), a))
            if cfg.matched_psnr is not None and getattr(victim, "differentiable", False):
                xm = _embed_at_psnr(victim, img, a, cfg.matched_psnr)
                psnr_m.append(psnr(img, xm))
                for dname in cfg.distortions:
                    dist_m[dname].append(_acc(_decode(victim, apply_chain(xm, dname, seed=cfg.seed + i)), a))
            if img_names is not None:
                per_image.append({"image": img_names[i], "size": f"{img.shape[1]}x{img.shape[0]}",
                                  "clean_acc": acc["clean"][-1], "psnr": acc["psnr"][-1], "ssim": acc["ssim"][-1],
                                  "self_acc_a": ra[i].tolist(), "self_acc_b": rb[i].tolist(), "cross_acc_a": row_cross,
                                  "pgd_acc_a": [None if np.isnan(v) else float(v) for v in pgd_a[i]],
                                  "pgd_acc_b": [None if np.isnan(v) else float(v) for v in pgd_b[i]],
                                  "distortions": {d: v[-1] for d, v in dist.items()}})
            report(prog, (i + 1) / len(imgs), f"{name}: image {i + 1}/{len(imgs)}")
        res = {"label": victim.label, "n_images": len(imgs), "n_bits": victim.n_bits,
               "clean_acc": float(np.mean(acc["clean"])), "psnr": float(np.mean(acc["psnr"])),
               "ssim": float(np.mean(acc["ssim"])), "psnr_rw1": float(np.mean(acc["psnr_rw1"])),
               "ssim_rw1": float(np.mean(acc["ssim_rw1"])),
               "self_acc_a": ra.mean(0).tolist(), "self_acc_b": rb.mean(0).tolist(),
               "self_acc_a_min": ra.min(0).tolist(),
               "embed_ms": 1000 * float(np.median(acc["embed_s"])), "decode_ms": 1000 * float(np.median(acc["decode_s"])),
               "distortions": {d: float(np.mean(v)) for d, v in dist.items()}}
        if cross_a:
            res["cross"] = {"attacker": cross_name, "acc_a": float(np.mean(cross_a)), "attacker_acc_b":
                            float(np.mean(cross_b))}
        if getattr(victim, "differentiable", False):
            res["pgd"] = {"eps": list(cfg.pgd_eps), "iters": cfg.pgd_iters, "acc_a": np.nanmean(pgd_a, 0).tolist(),
                          "acc_b": np.nanmean(pgd_b, 0).tolist()}
        if psnr_m:
            res["matched"] = {"target_psnr": cfg.matched_psnr, "psnr": float(np.mean(psnr_m)),
                              "distortions": {d: float(np.mean(v)) for d, v in dist_m.items()}}
        if img_names is not None:
            res["per_image"] = per_image
            order = sorted(per_image, key=lambda r: (r["clean_acc"], r["self_acc_a"][-1] if r["self_acc_a"] else 1.0))
            res["worst"] = [r["image"] for r in order[:3]]
            res["clean_acc_min"] = float(np.min(acc["clean"]))
        out[name] = res
    return out


def _embed_at_psnr(victim, img: np.ndarray, bits: np.ndarray, target_psnr: float) -> np.ndarray:
    """Embed with the residual rescaled to ``target_psnr`` dB (learned models only)."""
    if isinstance(victim, SRWBackend):
        return victim.embed(img, bits, target_psnr=target_psnr)
    return victim.with_psnr(target_psnr).embed(img, bits)


# ---------------------------------------------------------------------------------------- sensitivity / margins
def sensitivity_report(model: str, images: list[np.ndarray], seed: int = 0, n_random: int = 8,
                       radius: float = 2.0 / 255) -> dict[str, object]:
    """Empirical ratios ||f(x) - f(x')|| / ||x - x'|| of the encoder's output image (message fixed) and of the decoder's
    logits, over random and adversarial small perturbations of held-out frames; plus, for SRW models, every layer's
    reshaped-weight norm and true convolution operator norm (no global certificate: see :mod:`.lipschitz`)."""
    import torch

    from backend.watermark.learned import to_tensor

    victim = get_model(model)
    if not getattr(victim, "differentiable", False):
        raise InputError(f"{model} is not differentiable: no sensitivity measurement.")
    size = victim.model.cfg.size
    x = torch.cat([L.resize(to_tensor(im), (size, size)) for im in images])
    g = np.random.default_rng(seed)
    bits = torch.from_numpy(g.integers(0, 2, (len(images), victim.n_bits)).astype(np.float32))
    xw = victim.model.embed(x, bits).detach()
    dec = L.sensitivity(lambda z: victim.decoder_logits(z), xw, n_random=n_random, radius=radius, seed=seed)
    enc = L.sensitivity(lambda z: victim.model.embed(z, bits), x, n_random=n_random, radius=radius, seed=seed)
    out: dict[str, object] = {"decoder": {k: v.tolist() for k, v in dec.items()},
                              "encoder": {k: v.tolist() for k, v in enc.items()}, "frame": size}
    if isinstance(victim, SRWBackend):
        out["layers"] = L.layer_norms(victim.model)
        with torch.no_grad():
            lw = victim.model.decode_logits(xw)
            xr = victim.model.embed(xw, 1 - bits)
            lr = victim.model.decode_logits(xr)
        out["margins"] = {"clean_margin": (lw * (2 * bits - 1)).flatten().tolist(),
                          "reembed_change": (lr - lw).abs().flatten().tolist()}
    return out
