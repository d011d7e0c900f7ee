"""The caption audit: identity mentions, concept co-occurrence, PMI with intervals, skew, sentiment and crime terms.

Counting is vectorised: captions become sparse binary caption x term matrices (scikit-learn's ``CountVectorizer``
with a fixed vocabulary, in chunks of :data:`CHUNK` captions), and every co-occurrence count is a sparse matrix
product ``G^T X`` (identity groups x concepts). A caption is the unit: a term mentioned twice counts once.

- Tokens: lower-cased runs of letters, digits and apostrophes (:data:`TOKEN`); a concept is a word or a two-word
  phrase.
- Identity groups (:data:`backend.data.laionaudit.lexicon.IDENTITY`): a caption is in a group when it holds one of
  the group's words. Single-gender captions hold words of exactly one of the two gender groups.
- Concepts: the built-in lists and, optionally, the frequent words and two-word phrases of the corpus itself (found
  on its first :data:`NGRAM_SAMPLE` captions, stop words and identity words left out, then counted over all of it).
- PMI(g, c) = log( n(g, c) N / (n(g) n(c)) ) over captions, with a delta-method interval (:func:`pmi_ci`).
- Data bias of c = the female share among single-gender captions mentioning c, with a Wilson interval.
- Negative sentiment: the VADER lexicon (``vaderSentiment``) summed over a caption's words and normalised like VADER's
  compound score (``x / sqrt(x^2 + 15)``), negative at -0.05 or below; VADER's rules (negation, intensifiers, ...)
  are left out so that it vectorises (``vader_rules=True`` runs the full analyser, caption by caption).
- Crime association: a caption holding a word of :data:`backend.data.laionaudit.lexicon.CRIME`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

TOKEN = r"(?u)\b\w[\w']*\b"
CHUNK = 100_000
NGRAM_SAMPLE = 200_000
Z95 = 1.959963984540054


def _vectorizer(vocab: Sequence[str], ngrams: int = 2):  # noqa: ANN202 - a sklearn CountVectorizer
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(vocabulary=list(vocab), ngram_range=(1, ngrams), binary=True, token_pattern=TOKEN,
                           lowercase=True, dtype=np.int32)


def term_matrix(captions: Sequence[str], vocab: Sequence[str]):  # noqa: ANN201 - scipy.sparse.csr_matrix
    """Binary caption x term matrix ``[N, len(vocab)]`` (scipy CSR, int32): 1 where the caption holds the term."""
    import scipy.sparse as sp

    ngrams = 2 if any(" " in v for v in vocab) else 1
    vec = _vectorizer(vocab, ngrams)
    parts = [vec.transform(captions[s:s + CHUNK]) for s in range(0, len(captions), CHUNK)]
    if not parts:
        return sp.csr_matrix((0, len(vocab)), dtype=np.int32)
    return sp.vstack(parts, format="csr")


class Counts:
    """One pass over the captions: the binary caption x term matrix of every term the audit needs (concepts,
    identity words, crime words, VADER's words), sliced by name afterwards."""

    def __init__(self, captions: Sequence[str], *vocabs: Sequence[str]) -> None:
        merged: dict[str, None] = {}
        for v in vocabs:
            merged.update(dict.fromkeys(v))
        self.vocab = list(merged)
        self.col = {w: j for j, w in enumerate(self.vocab)}
        self.n = len(captions)
        self.x = term_matrix(captions, self.vocab).tocsc()

    def matrix(self, terms: Sequence[str]):  # noqa: ANN201 - scipy.sparse.csc_matrix [N, len(terms)]
        return self.x[:, [self.col[t] for t in terms]]

    def any_of(self, terms: Sequence[str]) -> np.ndarray:
        """Boolean ``[N]``: the caption holds one of ``terms``."""
        return np.asarray(self.matrix(sorted(set(terms))).sum(1)).ravel() > 0


def identity_matrix(captions: Sequence[str] | Counts, groups: dict[str, tuple[str, ...]] | None = None) -> np.ndarray:
    """Boolean ``[N, K]``: caption i mentions a word of group k (groups default: the identity lexicon)."""
    from .lexicon import IDENTITY

    groups = IDENTITY if groups is None else groups
    c = captions if isinstance(captions, Counts) else Counts(captions, [w for ws in groups.values() for w in ws])
    return np.stack([c.any_of(ws) for ws in groups.values()], axis=1) if groups else np.zeros((c.n, 0), bool)


def concept_gender_table(captions: Sequence[str] | Counts, concepts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per concept: the female share among single-gender captions mentioning it (NaN when none) and their count."""
    from .lexicon import GENDER_GROUPS, IDENTITY

    c = captions if isinstance(captions, Counts) else Counts(
        captions, concepts, [w for g in GENDER_GROUPS for w in IDENTITY[g]])
    f, m = c.any_of(IDENTITY[GENDER_GROUPS[0]]), c.any_of(IDENTITY[GENDER_GROUPS[1]])
    x = c.matrix(concepts)
    nf = np.asarray(x.T @ (f & ~m).astype(np.int64)).ravel()
    nm = np.asarray(x.T @ (m & ~f).astype(np.int64)).ravel()
    n = nf + nm
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, nf / np.maximum(n, 1), np.nan)
    return share, n


def warm() -> None:
    """Import scikit-learn's vectoriser and load VADER's lexicon (so that a timed count times counting only)."""
    _vectorizer(["warm"])
    vader_lexicon()


@lru_cache(maxsize=1)
def vader_lexicon() -> dict[str, float]:
    """VADER's word valences (``vaderSentiment``'s bundled lexicon, -4 to 4)."""
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return dict(SentimentIntensityAnalyzer().lexicon)


def vader_words() -> list[str]:
    """The lexicon's entries that are words of :data:`TOKEN` (emoticons and symbols never match a token)."""
    import re

    tok = re.compile(TOKEN)
    return sorted(w for w in vader_lexicon() if tok.fullmatch(w) and w == w.lower())


def wilson(k: np.ndarray, n: np.ndarray, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval ``(low, high)`` of the proportion ``k / n`` (NaN where ``n`` is 0)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        den = 1 + z * z / n
        mid = (p + z * z / (2 * n)) / den
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return np.where(n > 0, mid - half, np.nan), np.where(n > 0, mid + half, np.nan)


def pmi(n_gc: np.ndarray, n_g: np.ndarray, n_c: np.ndarray, n: int) -> np.ndarray:
    """PMI ``log(n_gc n / (n_g n_c))`` (natural log; NaN where ``n_gc`` is 0). Shapes broadcast: ``[K, V]``,
    ``[K, 1]``, ``[1, V]``."""
    n_gc = np.asarray(n_gc, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(n_gc) + np.log(float(n)) - np.log(np.asarray(n_g, float)) - np.log(np.asarray(n_c, float))
    return np.where(n_gc > 0, out, np.nan)


def pmi_ci(n_gc: np.ndarray, n_g: np.ndarray, n_c: np.ndarray, n: int, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Delta-method interval of :func:`pmi` under multinomial sampling of captions.

    With cell shares ``p11 = n_gc / n``, ``p1. = n_g / n``, ``p.1 = n_c / n`` and the gradient of
    ``log p11 - log p1. - log p.1`` over the 2 x 2 cells, ``Var = (p11 a11^2 + p10 / p1.^2 + p01 / p.1^2 - 1) / n``
    with ``a11 = 1 / p11 - 1 / p1. - 1 / p.1`` (the mean of the gradient under the cell shares is -1)."""
    n_gc, n_g, n_c = (np.asarray(a, float) for a in (n_gc, n_g, n_c))
    with np.errstate(divide="ignore", invalid="ignore"):
        p11, p1, q1 = n_gc / n, n_g / n, n_c / n
        p10, p01 = p1 - p11, q1 - p11
        a11 = 1 / p11 - 1 / p1 - 1 / q1
        var = (p11 * a11 ** 2 + p10 / p1 ** 2 + p01 / q1 ** 2 - 1) / n
        half = z * np.sqrt(np.maximum(var, 0.0))
    centre = pmi(n_gc, n_g, n_c, n)
    return centre - half, centre + half


def two_proportion_ci(k1: float, n1: float, k2: float, n2: float, z: float = Z95) -> tuple[float, float, float]:
    """``(p1 - p2, low, high)``: the difference of two independent proportions with its normal interval (NaN when a
    group is empty)."""
    if n1 <= 0 or n2 <= 0:
        return float("nan"), float("nan"), float("nan")
    p1, p2 = k1 / n1, k2 / n2
    half = z * float(np.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2))
    return p1 - p2, p1 - p2 - half, p1 - p2 + half


def discover_ngrams(captions: Sequence[str], min_count: int, max_terms: int,
                    sample: int = NGRAM_SAMPLE) -> list[str]:
    """Frequent words and two-word phrases of the first ``sample`` captions (at least ``min_count`` captions
    there), stop words, identity words and numbers left out, the ``max_terms`` most frequent first."""
    from sklearn.feature_extraction.text import CountVectorizer

    from .lexicon import STOP, identity_words

    head = list(captions[:sample])
    if not head:
        return []
    skip = STOP | identity_words()

    def ok(term: str) -> bool:
        words = term.split()
        return all(w not in skip and not w.replace("'", "").isdigit() and len(w) > 1 for w in words)

    vec = CountVectorizer(ngram_range=(1, 2), binary=True, token_pattern=TOKEN, lowercase=True,
                          min_df=max(1, min_count), dtype=np.int32)
    try:
        x = vec.fit_transform(head)
    except ValueError:  # no term reaches min_df
        return []
    counts = np.asarray(x.sum(0)).ravel()
    terms = vec.get_feature_names_out()
    order = np.argsort(-counts, kind="stable")
    return [str(terms[i]) for i in order if ok(str(terms[i]))][:max_terms]


def negative_flags(captions: Sequence[str], rules: bool = False, threshold: float = -0.05,
                   counts: Counts | None = None) -> np.ndarray:
    """Boolean ``[N]``: the caption's sentiment is negative (module docstring; ``rules``: VADER's full analyser;
    ``counts``: a :class:`Counts` of these captions that holds VADER's words)."""
    if rules:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        an = SentimentIntensityAnalyzer()
        return np.array([an.polarity_scores(c)["compound"] <= threshold for c in captions], dtype=bool)
    lex = vader_lexicon()
    words = vader_words()
    x = (counts or Counts(captions, words)).matrix(words)
    total = np.asarray(x @ np.array([lex[w] for w in words], float)).ravel()
    compound = total / np.sqrt(total * total + 15.0)
    return compound <= threshold


def lexicon_flags(captions: Sequence[str], words: Sequence[str]) -> np.ndarray:
    """Boolean ``[N]``: the caption holds one of ``words``."""
    return Counts(captions, words).any_of(words)
