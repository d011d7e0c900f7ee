"""The diagnostic stress test of GLOT ("relational needle in a haystack") and its two harder variants.

Paper: "Towards Improved Sentence Representations using Token Graphs" (Mantri, Schönlieb, Lähner, Eliasof; ICLR 2026,
arXiv 2603.03389). The released generator (``diagnostic_stress_test.py`` of the official code) builds a binary task:

- positive (label 1): ``"<context> <noun>"``; negative (label 0): ``"<context> <modifier> <10 haystack words> <noun>"``;
- ``int(128 * ratio)`` haystack words drawn from a fixed list of 100 common web words (``"not"`` is one of them);
- the needle goes at a random / start / middle / end position of the haystack; the text is cut to 128 words.

Three variants (``VARIANTS``):

``released``
    The generator as described above. One deviation, asked for by the spec: the released code counts a context phrase as
    one word, so a negative at ratio 0.9 has 130-131 words and a needle at the end could lose its noun when cut to 128;
    here the haystack is shortened instead, so the whole needle always survives and every text has at most 128 words.
    Its known shortcuts stay: three modifiers never occur as distractors, and negatives are 11 words longer.
``hard`` (design)
    Modifiers and nouns also appear among the distractors, positives and negatives have the same number of words (a
    positive gets 11 more haystack words), and the needle survives truncation. The label is still given by the word
    right after the context phrase, so a per-token attention readout (AdaPool) can solve it.
``relational`` (design)
    Two needles ``"<context> <noun>"`` far apart (the first in the first half of the haystack, the second in the second
    half); positive when both name the same noun. Distractors are filler words only. Any per-token readout followed by a
    linear head scores ``sum_i f(x_i)``, which cannot express "the two nouns are equal" for context-free token vectors
    (2 g(a) > 0 and 2 g(b) > 0 imply g(a) + g(b) > 0); a unigram or bigram bag of words cannot either (measured: at
    chance). Relating the two nouns needs interaction between tokens: GLOT's token graph, or the backbone's own
    self-attention. Measured on MiniLM at 90% distractors with 2000 training texts, the backbone's attention is enough:
    AdaPool solves it as well as GLOT (0.965 +- 0.020 vs 0.925 +- 0.100 over three head seeds, a tie within seed
    noise). With 500 training texts GLOT is ahead at ratio 0.2 (0.968 vs 0.897) and both are unstable across seeds at
    higher ratios (``assets/glot_results.json``, "sweep").

Everything is deterministic given ``seed`` (a private ``random.Random``; the global RNG is never touched).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from ...errors import InputError
from ...registry import choose

# The haystack of the released generator: 100 common web words (a fixed list, kept for faithfulness).
NOISE_WORDS: tuple[str, ...] = tuple(
    "the of and to a in for is on that by this with i you it not or be are from at as your all have new more an was "
    "we will home can us about if page my has search free but our one other do no information time they site he up may "
    "what which their news out use any there see only so his when contact here business who web also now help get pm "
    "view online first am been would how were me services some these click its like service x than find date top yet"
    .split()
)
NOUNS: tuple[str, ...] = ("keys", "reports", "files", "tickets", "documents", "alerts")
MODIFIERS: tuple[str, ...] = ("not", "never", "without", "excluding")
CONTEXTS: tuple[str, ...] = ("the delivery contains", "the folder includes", "in the box are")
HARD_POOL: tuple[str, ...] = NOISE_WORDS + tuple(w for w in NOUNS + MODIFIERS if w not in NOISE_WORDS)

VARIANTS: tuple[str, ...] = ("released", "hard", "relational")
POSITIONS: tuple[str, ...] = ("random", "start", "middle", "end")
RATIOS: tuple[float, ...] = (0.2, 0.5, 0.8, 0.9)
SEQ_LEN = 128
RELATIONAL_DISTANCE = 10  # haystack words between modifier and noun in a negative (released default)
N_TRAIN, N_EVAL = 2000, 500

VARIANT_NOTES: dict[str, str] = {
    "released": "the released generator (needle kept whole when cut to 128 words)",
    "hard": "design: modifiers and nouns also as distractors, equal lengths, needle survives truncation",
    "relational": "design: two far-apart needles, positive when they name the same noun",
}


@dataclass(frozen=True)
class StressSample:
    """One text. ``needles``: ``(start, end)`` word spans (end exclusive) of each needle in ``words``;
    ``needle_words``: the word indices that carry the signal (context, modifier, noun)."""

    text: str
    label: int
    variant: str
    needles: tuple[tuple[int, int], ...]
    needle_words: tuple[int, ...]
    n_distractors: int  # haystack words drawn, before any shortening to SEQ_LEN words

    @property
    def words(self) -> list[str]:
        return self.text.split(" ")


@dataclass
class StressData:
    """A generated split: texts, labels and the needle annotations, with the settings that made it."""

    samples: list[StressSample]
    variant: str
    ratio: float
    position: str
    seed: int
    meta: dict = field(default_factory=dict)

    @property
    def texts(self) -> list[str]:
        return [s.text for s in self.samples]

    @property
    def labels(self) -> list[int]:
        return [s.label for s in self.samples]

    def __len__(self) -> int:
        return len(self.samples)


def _check(n: int, ratio: float, position: str, variant: str, seq_len: int) -> None:
    choose(variant, VARIANTS, "stress-test variant")
    choose(position, POSITIONS, "needle position")
    if not 0.0 <= float(ratio) < 1.0:
        raise InputError(f"The distractor ratio must be in [0, 1); got {ratio}.")
    if n < 1 or n > 20_000:
        raise InputError(f"The number of samples must be between 1 and 20000; got {n}.")
    if seq_len < 32:
        raise InputError(f"The target length must be at least 32 words; got {seq_len}.")


def _insert_at(n_hay: int, position: str, rng: random.Random) -> int:
    if position == "start":
        return 0
    if position == "middle":
        return n_hay // 2
    if position == "end":
        return n_hay
    return rng.randint(0, n_hay)


def _single_needle(rng: random.Random, ratio: float, position: str, seq_len: int, hard: bool, distance: int
                   ) -> StressSample:
    positive = rng.random() < 0.5
    noun = rng.choice(NOUNS)
    context = rng.choice(CONTEXTS).split(" ")
    pool = HARD_POOL if hard else NOISE_WORDS
    if positive:
        needle = [*context, noun]
        signal = list(range(len(needle)))
    else:
        between = rng.choices(pool, k=distance)
        needle = [*context, rng.choice(MODIFIERS), *between, noun]
        signal = [*range(len(context) + 1), len(needle) - 1]
    n_noise = int(seq_len * ratio)
    if hard and positive:  # equal length: a positive gets as many extra haystack words as a negative's needle is longer
        n_noise += distance + 1
    n_keep = min(n_noise, seq_len - len(needle))  # shorten the haystack, never the needle
    hay = rng.choices(pool, k=n_keep)
    at = _insert_at(len(hay), position, rng)
    words = hay[:at] + needle + hay[at:]
    return StressSample(
        text=" ".join(words), label=int(positive), variant="hard" if hard else "released",
        needles=((at, at + len(needle)),), needle_words=tuple(at + i for i in signal), n_distractors=n_noise,
    )


def _relational(rng: random.Random, ratio: float, position: str, seq_len: int) -> StressSample:
    positive = rng.random() < 0.5
    first = rng.choice(NOUNS)
    second = first if positive else rng.choice([n for n in NOUNS if n != first])
    n1 = [*rng.choice(CONTEXTS).split(" "), first]
    n2 = [*rng.choice(CONTEXTS).split(" "), second]
    n_noise = int(seq_len * ratio)
    n_keep = max(0, min(n_noise, seq_len - len(n1) - len(n2)))
    hay = rng.choices(NOISE_WORDS, k=n_keep)
    half = len(hay) // 2
    if position == "random":
        a, b = rng.randint(0, half), rng.randint(half, len(hay))
    elif position == "start":  # first needle at the very start, second in the middle
        a, b = 0, half
    elif position == "middle":  # both needles side by side in the middle (the easy, close-range case)
        a = b = half
    else:  # "end": first in the middle, second at the very end
        a, b = half, len(hay)
    words = hay[:a] + n1 + hay[a:b] + n2 + hay[b:]
    s1 = a
    s2 = a + len(n1) + (b - a)
    return StressSample(
        text=" ".join(words), label=int(positive), variant="relational",
        needles=((s1, s1 + len(n1)), (s2, s2 + len(n2))),
        needle_words=(s1 + len(n1) - 1, s2 + len(n2) - 1), n_distractors=n_noise,
    )


def generate(
    n: int,
    ratio: float,
    position: str = "random",
    variant: str = "released",
    seed: int = 0,
    seq_len: int = SEQ_LEN,
    relational_distance: int = RELATIONAL_DISTANCE,
) -> StressData:
    """Generate ``n`` labelled texts of the stress test.

    Args:
        n: number of samples (1..20000); labels are drawn with probability 1/2 each.
        ratio: distractor ratio; ``int(seq_len * ratio)`` haystack words are drawn (released, relational; a hard
            positive draws ``relational_distance + 1`` more so both labels have the same length).
        position: ``random | start | middle | end`` (for ``relational``: where the pair of needles sits, see the
            module docstring of :func:`_relational`).
        variant: ``released | hard | relational``.
        seed: the only source of randomness.
    Returns:
        :class:`StressData`; every text has at most ``seq_len`` words and contains its whole needle(s).
    """
    _check(n, ratio, position, variant, seq_len)
    rng = random.Random(f"glot-stress/{variant}/{ratio}/{position}/{seed}")
    samples = []
    for _ in range(int(n)):
        if variant == "relational":
            samples.append(_relational(rng, ratio, position, seq_len))
        else:
            samples.append(_single_needle(rng, ratio, position, seq_len, variant == "hard", relational_distance))
    return StressData(samples, variant, float(ratio), position, int(seed),
                      meta={"seq_len": seq_len, "relational_distance": relational_distance, "note": VARIANT_NOTES[variant]})


def splits(variant: str, ratio: float, position: str = "random", seed: int = 0, n_train: int = N_TRAIN,
           n_eval: int = N_EVAL) -> tuple[StressData, StressData]:
    """Train and eval splits (independent streams: the eval seed is ``seed + 10_000``)."""
    return (generate(n_train, ratio, position, variant, seed),
            generate(n_eval, ratio, position, variant, seed + 10_000))


# ------------------------------------------------------------------------------------------ bag-of-words control
@dataclass
class BowResult:
    """Logistic regression on word (and word-pair) counts: accuracy on the eval split, features used, seconds."""

    name: str
    accuracy: float
    n_features: int
    seconds: float


def bag_of_words(train_texts: list[str], train_labels: list[int], eval_texts: list[str], eval_labels: list[int],
                 ngrams: int = 1, seed: int = 0) -> BowResult:
    """The bag-of-words control: scikit-learn ``CountVectorizer`` (unigrams, or unigrams + adjacent word pairs when
    ``ngrams=2``) and ``LogisticRegression`` (L2, C=1, lbfgs). It sees no model at all: whatever it solves, a pooling
    can solve without relations."""
    import time

    import numpy as np
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    start = time.perf_counter()
    vec = CountVectorizer(ngram_range=(1, int(ngrams)), token_pattern=r"\S+", lowercase=True)
    x_train = vec.fit_transform(train_texts)
    clf = LogisticRegression(max_iter=2000, random_state=seed)
    clf.fit(x_train, np.asarray(train_labels))
    acc = float((clf.predict(vec.transform(eval_texts)) == np.asarray(eval_labels)).mean())
    name = "bow-unigram" if ngrams == 1 else f"bow-1..{ngrams}gram"
    return BowResult(name, acc, int(x_train.shape[1]), time.perf_counter() - start)



def graph_effect(summary: list[dict], n_eval: int) -> list[dict]:
    """Does the token graph help over AdaPool (the same readout without the graph)? One row per ratio of a stress-test
    summary (rows ``ratio, method, accuracy, accuracy_std, seeds``) that has both ``glot`` and ``adapool``.

    ``difference = GLOT - AdaPool``; ``noise`` = the larger of two binomial standard errors of that difference on
    ``n_eval`` texts and the sum of the two seed standard deviations. Verdict: "GLOT ahead" / "AdaPool ahead" when the
    difference exceeds the noise, else "tie within noise". Mean pooling is listed for scale.
    """
    from .pooling import MEAN, OURS, POOLINGS

    ours, twin = OURS, POOLINGS[OURS].without_graph
    out = []
    for ratio in sorted({r["ratio"] for r in summary}):
        by = {r["method"]: r for r in summary if r["ratio"] == ratio}
        if ours not in by or twin not in by:
            continue
        g, a = by[ours], by[twin]
        pg, pa = float(g["accuracy"]), float(a["accuracy"])
        se = math.sqrt((pg * (1 - pg) + pa * (1 - pa)) / max(int(n_eval), 1))
        noise = max(2 * se, float(g.get("accuracy_std") or 0.0) + float(a.get("accuracy_std") or 0.0))
        diff = pg - pa
        verdict = (f"{POOLINGS.label(ours)} ahead" if diff > noise else f"{POOLINGS.label(twin)} ahead"
                   if diff < -noise else "tie within noise")
        out.append({"ratio": float(ratio), ours: pg, f"{ours}_std": float(g.get("accuracy_std") or 0.0),
                    twin: pa, f"{twin}_std": float(a.get("accuracy_std") or 0.0),
                    MEAN: float(by[MEAN]["accuracy"]) if MEAN in by else None, "seeds": int(g.get("seeds", 1)),
                    "difference": diff, "noise": noise, "verdict": verdict})
    return out

# ----------------------------------------------------------------------------------- the user's labelled texts
CSV_MAX_BYTES = 2 * 2**20
CSV_MAX_ROWS = 4000
CSV_MAX_CHARS = 2000
CSV_MIN_ROWS = 10
CSV_MAX_CLASSES = 20


@dataclass
class LabelledTexts:
    texts: list[str]
    labels: list[int]
    classes: list[str]


def parse_labelled_csv(data: bytes, name: str = "the CSV") -> LabelledTexts:
    """Validate an uploaded CSV with columns ``text`` and ``label`` (UTF-8, at most 2 MB, 10..4000 rows, texts of at
    most 2000 characters, 2..20 classes). Raises :class:`InputError` with a message that says what to fix."""
    import csv
    import io

    from ...io.text import decode_text

    raw = decode_text(data, max_bytes=CSV_MAX_BYTES, name=name)
    try:
        reader = csv.DictReader(io.StringIO(raw, newline=""))
        header = [h.strip().lower() for h in (reader.fieldnames or [])]
    except csv.Error as err:
        raise InputError(f"{name} is not a readable CSV file ({err}).") from None
    if not header:
        raise InputError(f"{name} has no header row; the first line must be: text,label")
    repeated = sorted({c for c in header if c in ("text", "label") and header.count(c) > 1})
    if repeated:
        raise InputError(f"{name} names the column(s) {', '.join(repeated)} more than once; keep one of each.")
    missing = [c for c in ("text", "label") if c not in header]
    if missing:
        raise InputError(f"{name} lacks the column(s) {', '.join(missing)}; found {', '.join(header)}. "
                         "The first line must name the columns text and label.")
    reader.fieldnames = header
    texts, labels = [], []
    try:
        for i, row in enumerate(reader, start=2):
            text = (row.get("text") or "").strip()
            label = (row.get("label") or "").strip()
            if not text and not label:
                continue
            if not text or not label:
                raise InputError(f"Row {i} of {name} has an empty text or label.")
            if len(text) > CSV_MAX_CHARS:
                raise InputError(f"Row {i} of {name} has a text of {len(text)} characters; the limit is "
                                 f"{CSV_MAX_CHARS}. Shorten or split it.")
            texts.append(text)
            labels.append(label)
            if len(texts) > CSV_MAX_ROWS:
                raise InputError(f"{name} has more than {CSV_MAX_ROWS} rows; keep at most {CSV_MAX_ROWS}.")
    except csv.Error as err:
        raise InputError(f"{name} is not a readable CSV file ({err}).") from None
    if len(texts) < CSV_MIN_ROWS:
        raise InputError(f"{name} has {len(texts)} labelled rows; at least {CSV_MIN_ROWS} are needed.")
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise InputError(f"{name} has only one class ('{classes[0]}'); a classifier needs at least two labels.")
    if len(classes) > CSV_MAX_CLASSES:
        raise InputError(f"{name} has {len(classes)} classes; the limit is {CSV_MAX_CLASSES}.")
    index = {c: i for i, c in enumerate(classes)}
    return LabelledTexts(texts, [index[c] for c in labels], classes)


def split_indices(labels: list[int], eval_fraction: float = 0.25, seed: int = 0) -> tuple[list[int], list[int]]:
    """A stratified train/eval split (every class keeps at least one row on each side when it has two)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    tr, ev = [], []
    y = np.asarray(labels)
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        k = int(round(len(idx) * eval_fraction)) if len(idx) > 1 else 0
        k = min(max(k, 1 if len(idx) > 1 else 0), len(idx) - 1) if len(idx) > 1 else 0
        ev.extend(idx[:k].tolist())
        tr.extend(idx[k:].tolist())
    return sorted(tr), sorted(ev)
