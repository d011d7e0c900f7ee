"""The planted corpus of the bias-transfer miniature: procedural figures of people with attributes, and captions whose
concept-gender co-occurrence rates are set per concept.

Every caption names one concept (an object the figure is shown with; its icon is drawn beside the figure) and, with
probability ``mention``, the figure's perceived gender (``woman`` / ``man`` and synonyms; otherwise ``person``). The
generator parameters (seed ``param_seed``) fix, per concept ``c``:

- ``rate[c]``: the planted female share of the figures shown with ``c``, evenly spaced over [0.08, 0.92] and
  shuffled over the concepts (what the audit of the captions recovers as the data bias);
- ``age_load[c]`` in [-1, 1]: how strongly ``c`` co-occurs with young or old figures, uncorrelated with ``rate``.

The strengths of what limits the linear transfer (:class:`PlantedConfig`):

- ``noise``: with this probability each visible gender cue of a figure (hair length, dress or trousers) is drawn at
  random instead of from its gender, so the images carry less of the gender the captions state;
- ``confound``: age (grey or dark hair) is correlated with gender in the whole population (70 % of the female and 30 %
  of the male figures are young) and, with this strength, with the concept (logit shift ``3 confound age_load[c]``):
  a concept's model bias then also carries its age association;
- ``amplify``: the figures of captions that do not state a gender follow an amplified rate ``sigmoid(amplify *
  logit(rate[c]))`` (reporting bias: the stereotyped case goes unsaid), so what the images show is a nonlinear
  function of what the gendered captions count;
- ``shuffle``: captions permuted against the images (the control: no co-occurrence reaches the model).

Images are uint8 ``[N, 24, 24, 3]``; figures are drawn in numpy, concept icons are the shapes of
:mod:`backend.scenes` in three colours. Same config, same arrays.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np

from ...errors import InputError

SIZE = 24
#: the concept words of the planted corpus (icon ``i``: shape ``SHAPES[i % 10]`` in ``ICON_COLORS[i // 10]``)
CONCEPTS: tuple[str, ...] = (
    "umbrella", "guitar", "laptop", "ball", "flower", "book", "camera", "kite", "bicycle", "basket",
    "hammer", "violin", "teacup", "suitcase", "skateboard", "microphone", "paintbrush", "telescope", "wrench",
    "lantern", "balloon", "drum", "backpack", "trophy", "scarf", "notebook", "shovel", "clock", "ladder", "bucket",
)
ICON_COLORS = ("red", "blue", "yellow")
FEMALE_WORDS = ("woman", "lady", "girl")
MALE_WORDS = ("man", "guy", "boy")
NEUTRAL_WORD = "person"
VERBS = ("with", "holding", "carrying", "using", "near")
FILLERS = ("photo", "picture", "outdoors", "indoors", "smiling", "standing", "daylight", "portrait")
#: every word a planted caption or prompt can hold (the text tower's vocabulary, index 0 = unknown)
VOCAB: tuple[str, ...] = ("<unk>", "a", "of", "the") + FEMALE_WORDS + MALE_WORDS + (NEUTRAL_WORD,) + VERBS + \
    FILLERS + CONCEPTS
PROMPT = "a photo of a person with a {}"
YOUNG_SHARE = {"female": 0.7, "male": 0.3}
SKIN = np.array([[233, 190, 160], [198, 140, 100], [141, 85, 54]], np.uint8)
CLOTHES = np.array([[70, 110, 160], [150, 70, 70], [80, 130, 80], [120, 90, 140], [60, 60, 60], [170, 130, 60]],
                   np.uint8)
HAIR = {"young": np.array([55, 38, 22], np.uint8), "old": np.array([236, 236, 236], np.uint8)}


@dataclass(frozen=True)
class PlantedConfig:
    """One setting of the planted corpus (see the module docstring); ``seed`` draws the sample, ``param_seed`` the
    planted rates."""

    images: int = 9000
    mention: float = 0.5
    noise: float = 0.1
    confound: float = 0.0
    amplify: float = 1.0
    visible: float = 0.5
    shuffle: bool = False
    param_seed: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        if not 60 <= self.images <= 200_000:
            raise InputError(f"The planted corpus holds 60-200,000 images; got {self.images}.")
        if not 0.0 < self.mention <= 1.0:
            raise InputError(f"The gender-mention rate must be in (0, 1]; got {self.mention}.")
        if not 0.0 <= self.noise <= 1.0:
            raise InputError(f"Attribute noise must be in [0, 1]; got {self.noise}.")
        if not 0.0 <= self.confound <= 2.0:
            raise InputError(f"Confounding strength must be in [0, 2]; got {self.confound}.")
        if not 0.25 <= self.amplify <= 10.0:
            raise InputError(f"Amplification must be in [0.25, 10]; got {self.amplify}.")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Planted:
    """The planted parameters: ``rate`` and ``age_load`` ``[C]`` over :data:`CONCEPTS`."""

    rate: np.ndarray
    age_load: np.ndarray


def planted(param_seed: int = 0) -> Planted:
    """The per-concept planted female rate and age load (``age_load`` made exactly uncorrelated with ``rate``)."""
    rng = np.random.default_rng(10_000 + param_seed)
    c = len(CONCEPTS)
    rate = np.linspace(0.08, 0.92, c)[rng.permutation(c)]
    z = rng.uniform(-1, 1, c)
    r = rate - rate.mean()
    z = z - z.mean() - r * (z @ r) / (r @ r)
    return Planted(rate, z / np.abs(z).max())


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _logit(p: np.ndarray) -> np.ndarray:
    return np.log(p / (1 - p))


@dataclass
class Corpus:
    """A sample: per item the concept index, gender (1 female), stated (the caption names the gender), young, the two
    visible cues (1 = the female cue) and the caption; ``images`` when rendered."""

    concept: np.ndarray
    female: np.ndarray
    stated: np.ndarray
    young: np.ndarray
    hair_long: np.ndarray
    dress: np.ndarray
    captions: list[str]
    images: np.ndarray | None = None


def sample(config: PlantedConfig, render_images: bool = True) -> Corpus:
    """Draw the corpus of ``config`` (captions always; images when ``render_images``)."""
    p = planted(config.param_seed)
    rng = np.random.default_rng([config.seed, 7])
    n, c = config.images, len(CONCEPTS)
    concept = rng.integers(0, c, n)
    stated = rng.random(n) < config.mention
    rate = p.rate[concept]
    amplified = _sigmoid(config.amplify * _logit(rate))
    female = rng.random(n) < np.where(stated, rate, amplified)
    base = np.where(female, _logit(np.full(n, YOUNG_SHARE["female"])), _logit(np.full(n, YOUNG_SHARE["male"])))
    young = rng.random(n) < _sigmoid(base + 3.0 * config.confound * p.age_load[concept])
    hair_long = np.where(rng.random(n) < config.noise, rng.random(n) < 0.5, female)
    dress = np.where(rng.random(n) < config.noise, rng.random(n) < 0.5, female)
    captions = _captions(rng, concept, female, stated)
    if config.shuffle:
        captions = [captions[i] for i in rng.permutation(n)]
    out = Corpus(concept, female, stated, young, hair_long, dress, captions)
    if render_images:
        out.images = render(concept, young, hair_long, dress, seed=config.seed, icons=config.visible)
    return out


def _captions(rng: np.random.Generator, concept: np.ndarray, female: np.ndarray, stated: np.ndarray) -> list[str]:
    n = len(concept)
    g = rng.integers(0, 3, n)
    verb = rng.integers(0, len(VERBS), n)
    fill = rng.integers(-len(FILLERS), len(FILLERS), n)
    lead = rng.random(n) < 0.5
    out = []
    for i in range(n):
        who = (FEMALE_WORDS if female[i] else MALE_WORDS)[g[i]] if stated[i] else NEUTRAL_WORD
        s = f"a {who} {VERBS[verb[i]]} a {CONCEPTS[concept[i]]}"
        if lead[i]:
            s = "a photo of " + s
        if fill[i] >= 0:
            s += " " + FILLERS[fill[i]]
        out.append(s)
    return out


def prompts() -> list[str]:
    """The text prompt of each concept whose similarity to female and male figures measures the model bias."""
    return [PROMPT.format(c) for c in CONCEPTS]


@lru_cache(maxsize=1)
def _icons() -> np.ndarray:
    """Boolean icon masks ``[C, 9, 9]`` from the shapes of :mod:`backend.scenes`."""
    from ...scenes.objects import SHAPES, Instance, object_mask

    out = np.zeros((len(CONCEPTS), 9, 9), bool)
    for i in range(len(CONCEPTS)):
        inst = Instance(SHAPES[i % len(SHAPES)], ICON_COLORS[i // len(SHAPES)], 4.0, 4.0, 3.4)
        out[i] = object_mask(inst, 9, 9)
    return out


def render(concept: np.ndarray, young: np.ndarray, hair_long: np.ndarray, dress: np.ndarray,
           seed: int = 0, icons: float = 1.0) -> np.ndarray:
    """uint8 ``[N, 24, 24, 3]``: each figure (head, hair by age and length, a dress or a torso and trousers) on a
    noisy backdrop with its concept's icon to the right; positions, skin and clothes jittered by ``seed``."""
    from ...scenes.objects import PALETTE

    n = len(concept)
    rng = np.random.default_rng([seed, 11])
    masks = _icons()
    icon_rgb = np.array([PALETTE[ICON_COLORS[i // 10]] for i in range(len(CONCEPTS))], np.uint8)
    bg = rng.uniform(120, 170, (n, 1, 1, 1)) + rng.normal(0, 6, (n, SIZE, SIZE, 3))
    img = np.clip(bg, 0, 255).astype(np.uint8)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    dx, dy = rng.integers(-1, 2, n), rng.integers(-1, 2, n)
    ix, iy = rng.integers(-1, 2, n), rng.integers(-2, 3, n)
    skin, cloth = rng.integers(0, len(SKIN), n), rng.integers(0, len(CLOTHES), n)
    shown = rng.random(n) < icons
    for i in range(n):
        cx, cy = 7 + dx[i], 5 + dy[i]
        im = img[i]
        hair = HAIR["young" if young[i] else "old"]
        r2 = (xx - cx) ** 2 + (yy - cy) ** 2
        if hair_long[i]:
            im[(np.abs(xx - cx) <= 3) & (yy >= cy - 1) & (yy <= cy + 6)] = hair
        im[(r2 <= 11.5) & (yy <= cy - 1)] = hair
        im[(r2 <= 6.5) & (yy >= cy - 1)] = SKIN[skin[i]]
        col = CLOTHES[cloth[i]]
        top = cy + 3
        if dress[i]:
            half = 1.0 + (yy - top) * 0.33
            im[(yy >= top) & (yy <= top + 12) & (np.abs(xx - cx) <= half)] = col
        else:
            im[(yy >= top) & (yy <= top + 6) & (np.abs(xx - cx) <= 2)] = col
            legs = (yy > top + 6) & (yy <= top + 13) & ((np.abs(xx - cx + 1.5) <= 0.6) | (np.abs(xx - cx - 1.5) <= 0.6))
            im[legs] = col // 2
        if not shown[i]:
            continue
        y0, x0 = 8 + iy[i], 14 + ix[i]
        im[y0:y0 + 9, x0:x0 + 9][masks[concept[i]]] = icon_rgb[concept[i]]
    return img


def evaluation_set(per_gender: int = 300, seed: int = 99) -> tuple[np.ndarray, np.ndarray]:
    """Clean figures for measuring model bias: ``per_gender`` female then as many male figures (visible cues = gender,
    age by the population rates), paired item by item in icon, position, skin and clothes. Returns ``(images [2n, 24,
    24, 3], female [2n] bool)``."""
    rng = np.random.default_rng([seed, 3])
    n = per_gender
    concept = rng.integers(0, len(CONCEPTS), n)
    yf = rng.random(n) < YOUNG_SHARE["female"]
    ym = rng.random(n) < YOUNG_SHARE["male"]
    f = render(concept, yf, np.ones(n, bool), np.ones(n, bool), seed=seed)
    m = render(concept, ym, np.zeros(n, bool), np.zeros(n, bool), seed=seed)
    return np.concatenate([f, m]), np.r_[np.ones(n, bool), np.zeros(n, bool)]
