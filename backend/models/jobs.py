"""The pure jobs of the embedded-models page: one live check per role on the user's own input.

Each takes the already loaded model (the page's shared cache; ``None``: the embedded default, loaded here) and returns
a small JSON-able dict with the seconds it took. The arguments are checked first (:class:`backend.errors.InputError`).

- :func:`run_similarity`: the text encoder's cosine similarity of two sentences.
- :func:`run_generate`: greedy generation by the causal LM.
- :func:`run_patch_features`: the vision encoder's patch tokens of one image and their first three principal
  components as colours (``image`` and ``pca`` are arrays ``[S, S, 3]``).
- :func:`run_classify`: the image classifier's top five classes.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from ..runtime import CancelToken, Progress, checked, report, timed

MAX_SENTENCE_CHARS = 500
MAX_PROMPT_CHARS = 1000
NEW_TOKENS = (8, 64)
SIZES = (224, 336, 448)  # the vision encoder's input sides (14-px patches)


def _model(model: Any, model_id: str) -> Any:
    if model is not None:
        return model
    from . import load

    return load(model_id)


def _text(value: Any, what: str, limit: int) -> str:
    text = str(value or "").strip()
    if not text:
        raise InputError(f"{what} is empty.")
    if len(text) > limit:
        raise InputError(f"{what} has {len(text)} characters; at most {limit}.")
    return text


def run_similarity(a: str, b: str, encoder: Any = None, progress: Progress | None = None,
                   token: CancelToken | None = None) -> dict[str, Any]:
    """``{cosine, seconds, source}`` of sentences ``a`` and ``b``."""
    progress = checked(progress, token)
    a, b = _text(a, "Sentence A", MAX_SENTENCE_CHARS), _text(b, "Sentence B", MAX_SENTENCE_CHARS)
    enc = _model(encoder, "minilm")
    report(progress, 0.5, "embedding")
    t = timed()
    sim = enc.similarity(a, b)
    return {"cosine": round(float(sim), 4), "seconds": round(t(), 3), "source": enc.source}


def run_generate(prompt: str, new_tokens: int, lm: Any = None, progress: Progress | None = None,
                 token: CancelToken | None = None) -> dict[str, Any]:
    """``{text, seconds, new_tokens, source}``: at most ``new_tokens`` greedy tokens after ``prompt``."""
    progress = checked(progress, token)
    prompt = _text(prompt, "The prompt", MAX_PROMPT_CHARS)
    if not NEW_TOKENS[0] <= int(new_tokens) <= NEW_TOKENS[1]:
        raise InputError(f"New tokens must be between {NEW_TOKENS[0]} and {NEW_TOKENS[1]}, got {new_tokens}.")
    lm = _model(lm, "smollm2")
    report(progress, 0.3, "generating (greedy)")
    t = timed()
    text = lm.generate(prompt, max_new_tokens=int(new_tokens))
    return {"text": text, "seconds": round(t(), 3), "new_tokens": int(new_tokens), "source": lm.source}


def run_patch_features(image: Any, size: int = 224, label: str = "", encoder: Any = None,
                       progress: Progress | None = None, token: CancelToken | None = None) -> dict[str, Any]:
    """``{image, pca, seconds, tokens, label}``: ``image`` (a PIL image) resized to ``size`` and the PCA colours of its
    ``(size / 14)^2`` patch tokens."""
    import numpy as np

    from ..features import pca_rgb

    progress = checked(progress, token)
    if size not in SIZES:
        raise InputError(f"The resolution must be one of {', '.join(map(str, SIZES))} px, got {size}.")
    enc = _model(encoder, "dinov2")
    report(progress, 0.4, "encoding patches")
    t = timed()
    feats = enc.patch_features([image], size=size)[0].numpy()
    side = size // 14
    return {"image": np.asarray(image.resize((size, size))), "pca": pca_rgb(feats, (side, side)),
            "seconds": round(t(), 3), "tokens": int(feats.shape[0]), "label": label}


def run_classify(image: Any, label: str = "", classifier: Any = None, progress: Progress | None = None,
                 token: CancelToken | None = None) -> dict[str, Any]:
    """``{top, seconds, label}``: the five most likely ImageNet classes ``(index, name, probability)``."""
    progress = checked(progress, token)
    clf = _model(classifier, "efficientnet")
    report(progress, 0.5, "classifying")
    t = timed()
    top = clf.topk(image, k=5)
    return {"top": [(int(i), n, float(p)) for i, n, p in top], "seconds": round(t(), 3), "label": label}
