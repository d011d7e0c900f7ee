"""The jobs of watermark-based attribution: what the page and the CLI run. Each is
``run_<what>(inputs..., config, progress=None, token=None) -> <What>Result`` with a frozen config that validates itself
(InputError with the same words for the page and the CLI) and a result of small summaries.

- :func:`run_create_users`: register new users with codes of a selection strategy in a users database
  (``attribution users create``, the page's Users tab).
- :func:`run_compare_pools`: pools of every selection strategy at one size (the page's pool comparison).
- :func:`run_embed`: one user's watermark into an image (``attribution embed``).
- :func:`run_attribute`: decode a suspect image, detect and attribute it among the users (``attribution attribute``).
- :func:`run_trace`: embed a user's watermark, post-process, decode, detect and attribute (the page's main run).
- :func:`run_evaluate`: rates per attack chain over images (``attribution evaluate``).
- :func:`run_sweep`: rates against the strength of one attack per backend and strategy on held-out images
  (``attribution sweep``, the page's live rerun).
- :func:`run_simulate`: simulated TAR and FDR against the number of users (the page's bounds tab).
- :func:`run_bounds`: the paper's Thm 1-4 for given parameters (``attribution bounds``, the page's bounds table).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from backend.errors import InputError
from backend.registry import choose
from backend.runtime import CancelToken, Progress, checked, report, timed
from backend.watermark.attribution import bounds as A
from backend.watermark.attribution import evaluation as E
from backend.watermark.codes import STRATEGIES
from backend.watermark.codes import get_method as get_strategy
from backend.watermark.registry import ALIASES, BACKENDS

EXECUTORS = ("local", "ray")  # where run_sweep runs its cases
MAX_USERS_PER_CALL = 2_000_000
MAX_TOP = 100
DEFAULT_BACKEND: str = BACKENDS[BACKENDS.names("ours")[0]].name  # the learned watermark
DEFAULT_STRATEGY: str = STRATEGIES.names("ours")[0]  # A-BSTA, the paper's selection
# the live rerun of the page: the learned backend and the first (strongest) classical one; the paper's codes and
# the first baseline (also ``attribution sweep``'s default strategies)
LIVE_BACKENDS: tuple[str, ...] = tuple(BACKENDS[k].name for k in BACKENDS.names("ours") + BACKENDS.names("baseline")[:1])
LIVE_STRATEGIES: tuple[str, ...] = tuple(STRATEGIES.names("ours") + STRATEGIES.names("baseline")[:1])
SIMULATED_USERS: tuple[int, ...] = (100, 1000, 10_000, 100_000)


# ------------------------------------------------------------------------------------------------------ checks
def backend_name(name: str) -> str:
    """A watermark backend's exact spelling (case-insensitive; ``learned`` = ``tinyhidden``)."""
    return BACKENDS.get(ALIASES.get(str(name).strip().lower(), name)).name


def _int(value: object, low: int, high: int | None, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low or (
            high is not None and value > high):
        span = f"between {low:,} and {high:,}" if high is not None else f"at least {low:,}"
        raise InputError(f"{what} must be {span}, got {value!r}.")


def _rate(value: float, what: str) -> None:
    if not isinstance(value, (int, float, np.floating)) or not 0.0 < float(value) < 1.0:
        raise InputError(f"{what} must be in (0, 1), got {value!r}.")


def _tau(tau: float | None) -> None:
    if tau is not None and (not isinstance(tau, (int, float, np.floating)) or not 0.5 < float(tau) <= 1.0):
        raise InputError(f"The detection threshold tau must be in (0.5, 1], got {tau!r}.")


def _chain(spec: str) -> None:
    from backend.watermark.attacks import parse_chain

    if not isinstance(spec, str):
        raise InputError("An attack is a chain such as jpeg:50 or jpeg:50+resize:0.5 (or none).")
    parse_chain(spec, "image")


def _result_dict(obj: object) -> dict:
    return asdict(obj)  # type: ignore[call-overload]


# ------------------------------------------------------------------------------------------------------- users
@dataclass(frozen=True)
class CreateUsersConfig:
    """``count`` new users whose codes extend the database's by ``strategy`` (A-BSTA, random, NRG; seeded by ``seed``,
    default the first new id; A-BSTA's search ``depth``); ``n_bits`` sets the code length of a new database;
    ``stats`` also measures the pool's largest pairwise bitwise accuracy."""

    count: int
    strategy: str = DEFAULT_STRATEGY
    seed: int | None = None
    depth: int = 4
    n_bits: int = 64
    stats: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "strategy", get_strategy(self.strategy).name)
        _int(self.count, 1, MAX_USERS_PER_CALL, "count")
        _int(self.depth, 0, 16, "The A-BSTA depth")
        _int(self.n_bits, 1, 64, "The code length")
        if self.seed is not None:
            _int(self.seed, 0, None, "The seed")


@dataclass
class CreateUsersResult:
    db: str
    created: int
    first_id: int
    last_id: int
    total_users: int
    strategy: str
    n_bits: int
    seconds: float
    max_pairwise_bitwise_accuracy: float | None = None
    pairs_sampled: int | None = None

    def to_json(self) -> dict:
        out = _result_dict(self)
        if out["max_pairwise_bitwise_accuracy"] is None:
            out.pop("max_pairwise_bitwise_accuracy")
            out.pop("pairs_sampled")
        return out


def run_create_users(db: str | Path | None, config: CreateUsersConfig, progress: Progress | None = None,
                     token: CancelToken | None = None) -> CreateUsersResult:
    """``db``: the users database (SQLite file; None: ``$METHOD_LAB_ATTRIBUTION_DB`` or the user cache)."""
    from backend.watermark.attribution.users import UserRegistry

    progress = checked(progress, token)
    reg = UserRegistry(db, n_bits=config.n_bits)
    clock = timed()
    ids = reg.create_users(config.count, config.strategy, seed=config.seed, depth=config.depth, progress=progress)
    seconds = clock()
    res = CreateUsersResult(str(reg.path), len(ids), ids[0], ids[-1], reg.count(), config.strategy, reg.n_bits,
                            round(seconds, 3))
    if config.stats:
        from backend.watermark.codes import pool_stats

        st = pool_stats(reg.pool().codes, reg.n_bits)
        res.max_pairwise_bitwise_accuracy, res.pairs_sampled = st.max_ba, st.sampled_pairs
    return res


@dataclass(frozen=True)
class ComparePoolsConfig:
    """Pools of ``num_users`` codes of ``n`` bits by every selection strategy (same seed, A-BSTA depth)."""

    num_users: int = 1000
    n: int = 64
    seed: int = 0
    depth: int = 4

    def __post_init__(self) -> None:
        _int(self.num_users, 2, min(STRATEGIES[k].max_users for k in STRATEGIES), "The number of users")
        _int(self.n, 8, 64, "The code length")
        _int(self.seed, 0, None, "The seed")
        _int(self.depth, 0, 16, "The A-BSTA depth")


@dataclass
class ComparePoolsResult:
    """Per strategy: ``counts[k]`` = pairs agreeing in k bits, the largest pairwise bitwise accuracy, seconds."""

    counts: dict[str, list[int]]
    max_ba: dict[str, float]
    seconds: dict[str, float]


def run_compare_pools(config: ComparePoolsConfig, progress: Progress | None = None,
                      token: CancelToken | None = None) -> ComparePoolsResult:
    progress = checked(progress, token)
    pools = E.compare_strategies(config.num_users, n=config.n, seed=config.seed, depth=config.depth,
                                 progress=progress)
    return ComparePoolsResult({k: [int(c) for c in v[0]] for k, v in pools.items()},
                              {k: float(v[1]) for k, v in pools.items()}, {k: float(v[2]) for k, v in pools.items()})


# ------------------------------------------------------------------------------------------ embed and attribute
@dataclass(frozen=True)
class EmbedConfig:
    """The watermark ``backend`` (``psnr``: the learned one's PSNR budget in dB, None: its own)."""

    backend: str = DEFAULT_BACKEND
    psnr: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "backend", backend_name(self.backend))
        if self.psnr is not None and (not isinstance(self.psnr, (int, float, np.floating))
                                      or not 10.0 <= float(self.psnr) <= 80.0):
            raise InputError(f"The PSNR budget must be between 10 and 80 dB, got {self.psnr!r}.")


@dataclass
class EmbedResult:
    watermarked: np.ndarray = field(repr=False)  # (H, W, 3) uint8
    backend: str
    backend_label: str
    psnr_db: float
    ssim: float
    seconds: float
    weights: str | None


def run_embed(image: np.ndarray, bits: np.ndarray, config: EmbedConfig, progress: Progress | None = None,
              token: CancelToken | None = None) -> EmbedResult:
    """``image`` ``(H, W, 3)`` uint8; ``bits`` ``(n,)`` uint8: one user's code."""
    from backend.watermark.metrics import psnr, ssim
    from backend.watermark.registry import get_method

    progress = checked(progress, token)
    be = get_method(config.backend, target_psnr=config.psnr)
    if be.n_bits != len(bits):
        raise InputError(f"the database holds {len(bits)}-bit codes but {config.backend} embeds {be.n_bits} bits.")
    clock = timed()
    wm = be.embed(image, bits)
    seconds = clock()
    report(progress, 1.0, "embedded")
    weights = getattr(be, "weights", None)
    return EmbedResult(wm, be.name, be.label, round(psnr(image, wm), 3), round(ssim(image, wm), 5),
                       round(seconds, 4), None if weights is None else str(weights))


@dataclass(frozen=True)
class AttributeConfig:
    """Decode with ``backend``; tau from ``target_fpr`` with the Thm 3 bound (``gamma``: the decoder's bias on clean
    content allowed for), or ``tau`` itself; the ``top`` best-matching users."""

    backend: str = DEFAULT_BACKEND
    target_fpr: float = 1e-4
    tau: float | None = None
    gamma: float = 0.0
    top: int = 5

    def __post_init__(self) -> None:
        object.__setattr__(self, "backend", backend_name(self.backend))
        _rate(self.target_fpr, "The target false-detection rate")
        _tau(self.tau)
        if not isinstance(self.gamma, (int, float, np.floating)) or not 0.0 <= float(self.gamma) < 0.5:
            raise InputError(f"gamma must be in [0, 0.5), got {self.gamma!r}.")
        _int(self.top, 1, MAX_TOP, "top")


@dataclass
class AttributeResult:
    backend: str
    backend_label: str
    users: int
    n_bits: int
    tau: float
    tau_bits: int
    target_fpr: float | None
    detected: bool
    p_value: float
    attributed_user: int | None
    best_match_user: int
    best_bitwise_accuracy: float
    top: list[dict]
    decoded_bits: str
    decode_seconds: float
    match_seconds: float
    weights: str | None


def run_attribute(image: np.ndarray, pool: A.UserPool, config: AttributeConfig, progress: Progress | None = None,
                  token: CancelToken | None = None) -> AttributeResult:
    """``image`` ``(H, W, 3)`` uint8, a suspect; ``pool`` every user's code."""
    from backend.watermark.registry import get_method

    progress = checked(progress, token)
    be = get_method(config.backend)
    clock = timed()
    bits, ok = be.decode_batch([image])
    decode_s = clock()
    if not ok[0]:
        raise InputError(f"{be.label} cannot decode this image: {image.shape[1]} x {image.shape[0]} px is below its "
                         f"minimum of {be.min_side} px per side.")
    tau = config.tau if config.tau is not None else A.tau_for_fpr(pool.n, len(pool), config.target_fpr, config.gamma)
    clock = timed()
    m = pool.match(bits[0], tau, k=config.top)
    match_s = clock()
    report(progress, 1.0, "matched")
    matches = int(round(m.score[0] * pool.n))
    weights = getattr(be, "weights", None)
    return AttributeResult(
        be.name, be.label, len(pool), pool.n, tau, A.detection_threshold(pool.n, tau),
        None if config.tau is not None else config.target_fpr, bool(m.detected[0]),
        A.detection_p_value(matches, pool.n, len(pool)),
        int(pool.ids[m.user_index[0]]) if m.detected[0] else None, int(pool.ids[m.user_index[0]]),
        float(m.score[0]),
        [{"user": int(pool.ids[i]), "bitwise_accuracy": float(s)}
         for i, s in zip(m.top_index[0], m.top_score[0], strict=True)],
        "".join(map(str, bits[0])), round(decode_s, 4), round(match_s, 5), None if weights is None else str(weights))


@dataclass(frozen=True)
class TraceConfig:
    """Embed user ``user``'s watermark with ``backend`` (``psnr``: the learned one's budget), post-process with the
    attack chain ``attack`` (``seed``), decode, detect (tau from ``target_fpr``, or ``tau``) and attribute among all
    users (the ``top`` best matches)."""

    user: int
    backend: str = DEFAULT_BACKEND
    psnr: float | None = None
    attack: str = "none"
    target_fpr: float = 1e-4
    tau: float | None = None
    top: int = 5
    seed: int = 0

    def __post_init__(self) -> None:
        EmbedConfig(self.backend, self.psnr)
        object.__setattr__(self, "backend", backend_name(self.backend))
        _int(self.user, 1, None, "The user id")
        _chain(self.attack)
        _rate(self.target_fpr, "The target false-detection rate")
        _tau(self.tau)
        _int(self.top, 1, MAX_TOP, "top")
        _int(self.seed, 0, None, "The seed")


@dataclass
class TraceResult:
    """One traced image: the images (uint8 ``(H, W, 3)``: original, watermarked, amplified residual, attacked), the
    decoded and the user's bits, PSNR/SSIM, tau, the verdict and the best-matching users, timings."""

    backend: str
    backend_label: str
    user_id: int
    original: np.ndarray = field(repr=False)
    watermarked: np.ndarray = field(repr=False)
    residual: np.ndarray = field(repr=False)
    attacked: np.ndarray = field(repr=False)
    psnr: float
    ssim: float
    attack: str
    decodable: bool
    decoded: np.ndarray
    reference: np.ndarray
    bit_accuracy: float | None
    tau: float
    tau_bits: int
    detected: bool
    p_value: float
    attributed_user: int | None
    top_users: list[int]
    top_scores: list[float]
    num_users: int
    n_bits: int
    seconds: dict[str, float]
    queries: int | None


def run_trace(image: np.ndarray, pool: A.UserPool, config: TraceConfig, progress: Progress | None = None,
              token: CancelToken | None = None) -> TraceResult:
    """``image`` ``(H, W, 3)`` uint8; ``pool`` every user's code (the user of ``config.user`` among them)."""
    progress = checked(progress, token)
    idx = int(np.searchsorted(pool.ids, config.user))
    if idx >= len(pool) or pool.ids[idx] != config.user:
        raise InputError(f"No user with id {config.user}.")
    res = E.embed_and_attribute(image, idx, pool, config.backend, config.psnr, config.attack, config.tau,
                                config.target_fpr, top=config.top, seed=config.seed, progress=progress)
    return TraceResult(**res)


# ---------------------------------------------------------------------------------------------------- evaluate
@dataclass(frozen=True)
class EvaluateConfig:
    """Rates of ``backend`` per attack chain of ``attacks`` over images, each watermarked for a random user of a pool
    of ``users`` codes by ``strategy`` (None: A-BSTA up to its 10,000 users, else random); tau from ``target_fpr``
    (Thm 3, ``gamma``) or ``tau``; ``clean`` extra clean decodes for the false-detection rate. Without images of its
    own the job evaluates ``count`` held-out images (``seed``)."""

    backend: str = DEFAULT_BACKEND
    attacks: tuple[str, ...] = ("none",)
    users: int = 10_000
    strategy: str | None = None
    depth: int = 4
    target_fpr: float = 1e-4
    gamma: float = 0.0
    tau: float | None = None
    psnr: float | None = None
    clean: int = 0
    count: int = 40
    seed: int = 0

    def __post_init__(self) -> None:
        backend_name(self.backend)
        EmbedConfig(self.backend, self.psnr)
        if isinstance(self.attacks, str) or not self.attacks:
            raise InputError("Give at least one attack chain (none for no attack).")
        for spec in self.attacks:
            _chain(spec)
        _int(self.users, 1, None, "The number of users")
        if self.strategy is None:
            ours = STRATEGIES[DEFAULT_STRATEGY]
            unlimited = next(k for k in STRATEGIES if not STRATEGIES[k].sequential)
            object.__setattr__(self, "strategy", DEFAULT_STRATEGY if self.users <= ours.max_users else unlimited)
        get_strategy(self.strategy)
        _int(self.depth, 0, 16, "The A-BSTA depth")
        _rate(self.target_fpr, "The target false-detection rate")
        _tau(self.tau)
        _int(self.clean, 0, 100_000, "The number of clean decodes")
        _int(self.count, 1, 10_000, "The number of images")
        _int(self.seed, 0, None, "The seed")

    def eval_config(self) -> E.EvalConfig:
        return E.EvalConfig(backend=self.backend, attacks=tuple(self.attacks), num_users=self.users,
                            strategy=str(self.strategy), depth=self.depth, target_fpr=self.target_fpr,
                            gamma=self.gamma, tau=self.tau, psnr=self.psnr, clean_decodes=self.clean, seed=self.seed)


def run_evaluate(images: list[np.ndarray] | None, config: EvaluateConfig, pool: A.UserPool | None = None,
                 progress: Progress | None = None, token: CancelToken | None = None) -> E.EvalResult:
    """``images``: ``(H, W, 3)`` uint8 arrays (None: ``config.count`` held-out images); ``pool``: the users to
    attribute among (None: a pool of ``config.users`` codes by ``config.strategy``)."""
    progress = checked(progress, token)
    if images is None:
        from backend.watermark.datasets import heldout_images

        images = heldout_images(config.count, seed=config.seed)
    return E.evaluate(images, config.eval_config(), pool=pool, progress=progress)


@dataclass(frozen=True)
class SweepConfig:
    """Rates against the ``strengths`` of the attack ``attack`` for every (backend, strategy) of ``backends`` x
    ``strategies``, on ``count`` held-out images (seeded by ``image_seed``, default ``seed``; sides ``min_side``-512
    px), a pool of ``users`` codes, ``clean`` clean decodes (sides ``clean_side``) for the false-detection rate;
    ``executor`` ``ray`` runs one task per (backend, strategy) with the same numbers."""

    attack: str = "jpeg"
    strengths: tuple[float, ...] = (90.0, 70.0, 50.0)
    backends: tuple[str, ...] = (DEFAULT_BACKEND,)
    strategies: tuple[str, ...] = LIVE_STRATEGIES
    users: int = 1000
    count: int = 8
    clean: int = 0
    target_fpr: float = 1e-4
    seed: int = 0
    image_seed: int | None = None
    min_side: int = 128
    clean_side: tuple[int, int] = (64, 256)
    executor: str = "local"

    def __post_init__(self) -> None:
        from backend.watermark.attacks import ATTACKS

        a = ATTACKS.get(self.attack)
        if "image" not in a.media:
            raise InputError(f"{a.name} does not apply to images; sweep jpeg, resize, crop, noise, blur, ...")
        object.__setattr__(self, "attack", a.name)
        if isinstance(self.strengths, str) or not self.strengths:
            raise InputError("Give at least one strength of the attack (--strengths 90,70,50).")
        for v in self.strengths:
            _chain(f"{a.name}:{v:g}")
        if isinstance(self.backends, str) or not self.backends or isinstance(self.strategies, str) or not (
                self.strategies):
            raise InputError("Name at least one backend and one strategy.")
        object.__setattr__(self, "backends", tuple(backend_name(b) for b in self.backends))
        object.__setattr__(self, "strategies", tuple(get_strategy(s).name for s in self.strategies))
        _int(self.users, 1, None, "The number of users")
        _int(self.count, 1, 1000, "The number of images")
        _int(self.clean, 0, 100_000, "The number of clean decodes")
        _rate(self.target_fpr, "The target false-detection rate")
        _int(self.seed, 0, None, "The seed")
        if self.image_seed is not None:
            _int(self.image_seed, 0, None, "The image seed")
        _int(self.min_side, 32, 512, "The smallest image side")
        lo, hi = self.clean_side
        _int(lo, 32, None, "The smallest clean image side")
        _int(hi, lo, 1024, "The largest clean image side")
        object.__setattr__(self, "executor", choose(self.executor, EXECUTORS, "executor"))


@dataclass
class SweepResult:
    """One row per (backend, strategy, strength): bit accuracy, TDR, TAR, FDR, bounds, PSNR, costs."""

    attack: str
    strengths: list[float]
    rows: list[dict]


def run_sweep(config: SweepConfig, progress: Progress | None = None, token: CancelToken | None = None) -> SweepResult:
    from backend.watermark.datasets import heldout_images

    progress = checked(progress, token)
    seed = config.seed if config.image_seed is None else config.image_seed
    images = heldout_images(config.count, seed=seed, min_side=config.min_side)
    clean = (E.clean_decode_set(config.clean, seed=config.seed, min_side=config.clean_side[0],
                                max_side=config.clean_side[1]) if config.clean else None)
    rows = E.strength_sweep(images, config.attack, list(config.strengths), list(config.backends),
                            list(config.strategies), num_users=config.users, clean=clean,
                            target_fpr=config.target_fpr, seed=config.seed, progress=progress,
                            executor=config.executor)
    return SweepResult(config.attack, [float(v) for v in config.strengths], rows)


# ------------------------------------------------------------------------------------------------------ theory
@dataclass(frozen=True)
class SimulateConfig:
    """Decodes of accuracy ``beta`` (n bits, tau) against random pools of each size of ``users``: ``decodes`` per
    pool for the TAR, as many uniform strings for the FDR."""

    n: int = 64
    beta: float = 0.99
    tau: float = 0.9
    users: tuple[int, ...] = SIMULATED_USERS
    decodes: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        _int(self.n, 8, 64, "n")
        if not isinstance(self.beta, (int, float, np.floating)) or not 0.0 <= float(self.beta) <= 1.0:
            raise InputError(f"beta must be in [0, 1], got {self.beta!r}.")
        _tau(self.tau)
        if isinstance(self.users, int) or not self.users:
            raise InputError("Give at least one pool size.")
        for u in self.users:
            _int(u, 1, 10_000_000, "A pool size")
        _int(self.decodes, 1, 100_000, "The number of decodes")
        _int(self.seed, 0, None, "The seed")


@dataclass
class SimulateResult:
    users: list[int]
    tar: list[float]
    fdr: list[float]


def run_simulate(config: SimulateConfig, progress: Progress | None = None,
                 token: CancelToken | None = None) -> SimulateResult:
    progress = checked(progress, token)
    sim = E.simulate_vs_users(config.n, config.beta, config.tau, list(config.users), config.decodes,
                              seed=config.seed, progress=progress)
    return SimulateResult([int(u) for u in sim["users"]], [float(v) for v in sim["tar"]],
                          [float(v) for v in sim["fdr"]])


@dataclass(frozen=True)
class BoundsConfig:
    """The paper's bounds at code length ``n``, bit accuracy ``beta``, threshold ``tau``, the pool's smallest and
    largest pairwise bitwise accuracy ``alpha_min`` / ``alpha_max``, ``users`` users and clean-content bias
    ``gamma`` (defaults: the paper's Table 5)."""

    n: int = 64
    beta: float = 0.99
    tau: float = 0.9
    alpha_min: float = 0.2
    alpha_max: float = 0.8
    users: int = 100_000_000
    gamma: float = 0.05

    def __post_init__(self) -> None:
        try:
            A._check_n(self.n)
            for name in ("beta", "alpha_min", "alpha_max", "gamma"):
                A._check_p(name, getattr(self, name))
            A._check_tau(self.tau)
        except ValueError as err:
            raise InputError(str(err)) from None
        _int(self.users, 1, None, "The number of users")


@dataclass
class BoundsResult:
    tdr_lower_bound_thm1: float | None  # None where tau >= beta (the bound needs tau < beta)
    fdr_upper_bound_thm2: float
    fdr_upper_bound_thm3: float
    tar_lower_bound_thm4: float
    detection_threshold_bits: int
    attribution_threshold_bits: int


def run_bounds(config: BoundsConfig, progress: Progress | None = None, token: CancelToken | None = None
               ) -> BoundsResult:
    progress = checked(progress, token)
    c = config
    try:
        res = BoundsResult(
            A.tdr_lower_bound(c.n, c.beta, c.tau, c.alpha_min) if c.tau < c.beta else None,
            A.fdr_upper_bound_random(c.n, c.tau, c.alpha_max), A.fdr_upper_bound_independent(c.users, c.n, c.tau,
                                                                                              c.gamma),
            A.tar_lower_bound(c.n, c.beta, c.tau, c.alpha_max), A.detection_threshold(c.n, c.tau),
            A.attribution_threshold(c.n, c.tau, c.alpha_max))
    except ValueError as err:
        raise InputError(str(err)) from None
    report(progress, 1.0, "bounds")
    return res


__all__ = ["DEFAULT_BACKEND", "DEFAULT_STRATEGY", "EXECUTORS", "LIVE_BACKENDS", "LIVE_STRATEGIES", "SIMULATED_USERS",
           "AttributeConfig", "AttributeResult", "BoundsConfig", "BoundsResult", "ComparePoolsConfig",
           "ComparePoolsResult", "CreateUsersConfig", "CreateUsersResult", "EmbedConfig", "EmbedResult",
           "EvaluateConfig", "SimulateConfig", "SimulateResult", "SweepConfig", "SweepResult", "TraceConfig",
           "TraceResult", "backend_name", "run_attribute", "run_bounds", "run_compare_pools", "run_create_users",
           "run_embed", "run_evaluate", "run_simulate", "run_sweep", "run_trace"]
