"""Policy (b): the iLLaVA page's tiny vision-language model (:mod:`backend.tokens.illava.tiny_vlm`: frozen DINOv2
ViT-S/14 -> trained projector -> SmolLM2-135M with merged LoRA adapters) as a jigsaw policy over the closed set of
the 24 answers of a 2 x 2 puzzle; the post-training itself is :mod:`.vlm_grpo`.

The puzzle is one image: the four shuffled tiles laid out 2 x 2 at ``JIGSAW_PX = 112`` pixels (64 image tokens;
each tile is 4 x 4 patches), labelled 1-4 in raster order of the layout; the prompt is the model's own
``"Image:" <image tokens> "\\nQ: <QUESTION>\\nA: "`` and the answer four digits (``"3142"``: for each original
position in raster order, the label of the shown tile that belongs there). ``score(sigma)`` is the language model's
log-probability of the answer under constrained decoding: each digit's next-token logit among the four digit tokens,
normalised over the digits not used yet (the fourth is then forced). The 24 scores are a distribution (their
``logsumexp`` is 0) and the policy is their softmax. They come from one pass over the prompt and a prefix tree on its
key/value cache: 4 branches after the first digit, 12 after the second (16 tokens instead of 24 x 3), so that a
forward and backward pass costs about as much as 95 tokens.

The vision encoder is frozen, so the puzzles' encoder tokens are computed once per puzzle set and kept under
``cache_dir()/jigsaw`` (:func:`puzzle_tokens`); the scorer then starts from them (:meth:`JigsawScorer.scores_from_tokens`).

Measured before and after post-training: the jigsaw (exact-solve rate of the argmax answer, the probability of the
true order, the expected graded reward) on held-out scenes and photographs, and the accuracy on held-out scene
questions of the iLLaVA page (:mod:`backend.tokens.illava.scenes`, the unreduced model at 224 pixels; answers cached
by chunk under ``cache_dir()/jigsaw``, keyed by a digest of the trained weights).
"""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...runtime import ASSETS
from .puzzle import make_puzzle, source_image
from .reward import score_perm

JIGSAW_PX = 112
QUESTION = "Put the four shuffled tiles back in order."
PERMS = torch.tensor(list(itertools.permutations(range(4))))  # [24, 4], lexicographic: the prefix tree's order
VLM_FILE = ASSETS / "jigsaw_vlm_projector.safetensors"
VLM_COMMAND = "python -m backend.train jigsaw --part vlm --vlm-steps 1000 --vlm-lr 0.0"
TRAIN_SEED0 = 40_000  # scene-package seeds of the VLM's training puzzles (disjoint from the policy's 0..399)
TRAIN_SHUFFLE0 = 60_000
EVAL_SEED = 32_000  # shuffle seeds of the held-out puzzles (images: scenes_val 0.., photos 0..)
EVAL_COUNTS = {"scenes_val": 100, "photos": 60}
CHANCE = 1 / 24


def puzzle_image(image: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A 2 x 2 puzzle of an image as the VLM sees it: uint8 ``[112, 112, 3]`` and the 0-based truth ``[4]``."""
    from PIL import Image

    from .puzzle import assemble

    p = make_puzzle(image, 2, seed)
    img = assemble(p.shown, 2)
    img = np.asarray(Image.fromarray(img).resize((JIGSAW_PX, JIGSAW_PX), Image.Resampling.BICUBIC), np.uint8)
    return img, p.truth


def _tree_index() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The prefix tree of the 24 answers: the second digits of the 12 depth-2 branches ``[4, 3]`` (ascending after
    each first digit), each answer's depth-2 branch ``[24]``, and the used-digit masks of depth 2 ``[4, 4]`` and
    depth 3 ``[12, 4]``."""
    rest = torch.tensor([[d for d in range(4) if d != a] for a in range(4)])
    node = torch.tensor([int(p[0]) * 3 + int((rest[p[0]] == p[1]).nonzero()) for p in PERMS])
    used2 = torch.eye(4, dtype=torch.bool)
    used3 = torch.zeros(12, 4, dtype=torch.bool)
    for a in range(4):
        for j, b in enumerate(rest[a]):
            used3[a * 3 + j, [a, int(b)]] = True
    return rest, node, used2, used3


class JigsawScorer:
    """The closed-set scorer over a :class:`~backend.tokens.illava.tiny_vlm.TinyVLM` (or a copy whose projector
    or language model is swapped; see the module docstring)."""

    def __init__(self, vlm: Any) -> None:
        tok = vlm.lm.tokenizer
        self.vlm = vlm
        q = tok("\nQ: " + QUESTION + "\nA:", add_special_tokens=False)["input_ids"]
        sample = tok(" 1234", add_special_tokens=False)["input_ids"]  # [space, 1, 2, 3, 4]
        self.digits = torch.tensor(sample[1:])
        self.q_ids = torch.tensor(q + sample[:1])
        self.rest, self.node, self.used2, self.used3 = _tree_index()

    @property
    def prompt_len(self) -> int:
        return int(self.vlm.prefix_emb.shape[1] + (JIGSAW_PX // 14) ** 2 + len(self.q_ids))

    def tokens(self, images: list[np.ndarray]) -> torch.Tensor:
        """The frozen encoder's patch tokens of puzzle images: ``[B, 64, 384]`` (one image at a time)."""
        from PIL import Image

        vlm = self.vlm
        out = []
        with torch.no_grad():
            for im in images:
                px = vlm.vision.preprocess([Image.fromarray(im)], size=JIGSAW_PX)
                out.append(vlm.vision.model(pixel_values=px).last_hidden_state[:, vlm.adapter.prefix:])
        return torch.cat(out)

    def scores(self, images: list[np.ndarray], grad: bool = False) -> torch.Tensor:
        """Log-probabilities of the 24 answers for each image: ``[B, 24]``."""
        return self.scores_from_tokens(self.tokens(images), grad=grad)

    def scores_from_tokens(self, tokens: torch.Tensor, grad: bool = False) -> torch.Tensor:
        """Log-probabilities of the 24 answers (rows of :data:`PERMS`) from encoder tokens ``[B, 64, 384]``:
        ``[B, 24]``. With ``grad``, differentiable in the projector and in anything hooked into the language model."""
        vlm = self.vlm
        model = vlm.lm.model
        b = tokens.shape[0]
        ctx = torch.enable_grad() if grad else torch.no_grad()
        with ctx:
            with torch.no_grad():
                q = model.get_input_embeddings()(self.q_ids)[None].expand(b, -1, -1)
            emb = vlm.projector(tokens)
            seq = torch.cat([vlm.prefix_emb.expand(b, -1, -1), emb, q], 1)
            n = seq.shape[1]
            out = model.model(inputs_embeds=seq, use_cache=True)
            cache = out.past_key_values
            cache.batch_repeat_interleave(4)  # rows (b, first digit)
            h2 = model.model(input_ids=self.digits.repeat(b)[:, None], past_key_values=cache,
                             attention_mask=torch.ones(b * 4, n + 1, dtype=torch.long)).last_hidden_state[:, -1]
            cache.batch_repeat_interleave(3)  # rows (b, first digit, second digit)
            ids3 = self.digits[self.rest.flatten()].repeat(b)[:, None]
            h3 = model.model(input_ids=ids3, past_key_values=cache,
                             attention_mask=torch.ones(b * 12, n + 2, dtype=torch.long)).last_hidden_state[:, -1]
            w = model.lm_head.weight[self.digits]  # [4, d]: the digit rows of the output layer
            l1 = (out.last_hidden_state[:, -1] @ w.T).float().log_softmax(-1)  # [B, 4]
            l2 = (h2 @ w.T).float().view(b, 4, 4).masked_fill(self.used2, -torch.inf).log_softmax(-1)
            l3 = (h3 @ w.T).float().view(b, 12, 4).masked_fill(self.used3, -torch.inf).log_softmax(-1)
            p = PERMS
            return l1[:, p[:, 0]] + l2[:, p[:, 0], p[:, 1]] + l3[:, self.node, p[:, 2]]


# --------------------------------------------------------------------------------------------------- puzzle sets
def puzzle_spec(source: str, count: int) -> tuple[int, int]:
    """``(first image index, first shuffle seed)`` of a VLM puzzle set: ``scenes`` is the training set (scene
    seeds from :data:`TRAIN_SEED0`), ``scenes_val`` and ``photos`` the held-out sets (puzzle ``i`` of a set does not
    depend on ``count``)."""
    if source == "scenes":
        return TRAIN_SEED0, TRAIN_SHUFFLE0
    return 0, EVAL_SEED


def puzzle_tokens(scorer: JigsawScorer, source: str, count: int) -> tuple[torch.Tensor, np.ndarray]:
    """Encoder tokens ``[count, 64, 384]`` and truths ``[count, 4]`` of the first ``count`` puzzles of a set
    (image ``start + i`` under shuffle seed ``shuffle0 + i``, see :func:`puzzle_spec`), cached under
    ``cache_dir()/jigsaw`` (the encoder is frozen: every model shares them)."""
    from ...runtime import cache_dir

    start, shuffle0 = puzzle_spec(source, count)
    folder = cache_dir() / "jigsaw"
    path = folder / f"vlm_tok_v2_{source}_{int(count)}.pt"
    stem = f"vlm_tok_v2_{source}_"
    sizes = sorted(int(f.stem[len(stem):]) for f in folder.glob(stem + "*.pt") if f.stem[len(stem):].isdigit())
    for n in sizes:  # the smallest cached set that holds the first ``count`` puzzles
        if n >= int(count):
            d = torch.load(folder / f"vlm_tok_v2_{source}_{n}.pt", weights_only=True)
            return d["tokens"][:int(count)], d["truth"][:int(count)].numpy()
    imgs, truths = [], []
    for i in range(int(count)):
        img, truth = puzzle_image(source_image(source, start + i), shuffle0 + i)
        imgs.append(img)
        truths.append(truth)
    tokens = scorer.tokens(imgs)
    truth = np.stack(truths).astype(np.int64)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save({"tokens": tokens, "truth": torch.from_numpy(truth)}, tmp)
    tmp.replace(path)
    return tokens, truth


def truth_index(truth: np.ndarray) -> np.ndarray:
    """Row of :data:`PERMS` of each truth ``[N, 4]`` -> ``[N]``."""
    return (PERMS.numpy()[None] == np.asarray(truth)[:, None]).all(-1).argmax(1)


def reward_table(truth: np.ndarray) -> np.ndarray:
    """Graded reward of every answer for every puzzle: ``[N, 24]`` (format reward included)."""
    return score_perm(PERMS.numpy()[None], np.asarray(truth)[:, None], "graded")


def jigsaw_metrics(scorer: JigsawScorer, tokens: torch.Tensor, truth: np.ndarray, batch: int = 8) -> dict[str, list]:
    """Per puzzle: ``exact`` (the argmax answer is the true order, 0/1), ``p_true`` (the policy's probability of the
    true order), ``reward`` (the policy's expected graded reward) and ``tiles`` (right positions of the argmax)."""
    logp = torch.cat([scorer.scores_from_tokens(tokens[i:i + batch]) for i in range(0, len(tokens), batch)])
    p = logp.exp().numpy().astype(np.float64)
    t = truth_index(truth)
    best = p.argmax(1)
    table = reward_table(truth)
    return {"exact": [int(v) for v in best == t],
            "p_true": [round(float(v), 6) for v in p[np.arange(len(t)), t]],
            "reward": [round(float(v), 6) for v in (p * table).sum(1)],
            "tiles": [float(v) for v in (PERMS.numpy()[best] == truth).mean(1)]}


def jigsaw_eval(scorer: JigsawScorer, source: str, count: int) -> dict[str, list]:
    """:func:`jigsaw_metrics` on the first ``count`` held-out puzzles of ``source``."""
    tokens, truth = puzzle_tokens(scorer, source, count)
    return jigsaw_metrics(scorer, tokens, truth)


# ---------------------------------------------------------------------------------------------- scene questions
def qa_correct(vlm: Any, n_scenes: int, start: int = 0) -> tuple[list[int], list[str]]:
    """Per-question correctness (0/1) of the unreduced model on held-out iLLaVA scenes ``start .. start + n``, and
    the question kinds."""
    from ...tokens.illava import scenes
    from ...tokens.illava.evaluation import evaluate

    scene_list = [scenes.make_scene(scenes.HELDOUT_SEED0 + i) for i in range(int(start), int(start) + int(n_scenes))]
    res = evaluate(vlm, scene_list)
    qs = [q for s in scene_list for q in s.questions]
    return [int(p == q.answer) for p, q in zip(res.predictions, qs, strict=True)], [q.kind for q in qs]


QA_CHUNK = 22
QA_BOUNDS = (0, 22, 44, 66, 86)


def _qa_cache(tag: str, start: int, stop: int) -> Path:
    from ...runtime import cache_dir

    return cache_dir() / "jigsaw" / f"qa_{tag}_{int(start)}_{int(stop)}.json"


def qa_chunk(vlm: Any, tag: str, start: int, stop: int) -> tuple[list[int], list[str]]:
    """:func:`qa_correct` on held-out scenes ``start .. stop``, kept under ``cache_dir()/jigsaw`` by ``tag`` (the
    digest of the model's trained weights), so that several processes can share the evaluation."""
    import json

    path = _qa_cache(tag, start, stop)
    if path.exists():
        d = json.loads(path.read_text())
        return d["correct"], d["kinds"]
    correct, kinds = qa_correct(vlm, stop - start, start)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"correct": correct, "kinds": kinds}))
    tmp.replace(path)
    return correct, kinds


def chunks(n_scenes: int) -> list[tuple[int, int]]:
    """The cached pieces of the first ``n_scenes`` held-out scenes: 0-22, 22-44, 44-66, 66-86, then 22 at a time."""
    bounds = [b for b in QA_BOUNDS if b < int(n_scenes)]
    while bounds[-1] + QA_CHUNK < int(n_scenes) and bounds[-1] >= QA_BOUNDS[-1]:
        bounds.append(bounds[-1] + QA_CHUNK)
    bounds.append(int(n_scenes))
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def projector_tag(projector: Any) -> str:
    """A digest of a projector's weights."""
    return _digest(projector.state_dict())


def _digest(state: dict[str, torch.Tensor]) -> str:
    h = hashlib.sha256()
    for k, v in sorted(state.items()):
        h.update(k.encode())
        h.update(v.detach().float().numpy().tobytes())
    return h.hexdigest()[:16]


def model_tag(vlm: Any) -> str:
    """A digest of what post-training changed: the projector, and the jigsaw LoRA adapters when there are any
    (the base model's tag is its projector's)."""
    lora = getattr(vlm, "jigsaw_lora", None)
    tag = projector_tag(vlm.projector)
    return tag if not lora else tag[:8] + _digest(lora)[:8]


def qa_range(vlm: Any, n_scenes: int) -> tuple[list[int], list[str]]:
    """Per-question correctness and kinds on the first ``n_scenes`` held-out scenes, chunk by chunk (cached)."""
    tag = model_tag(vlm)
    out = [qa_chunk(vlm, tag, a, b) for a, b in chunks(n_scenes)]
    return [c for o in out for c in o[0]], [k for o in out for k in o[1]]


# ------------------------------------------------------------------------------------------------------ loading
def load_base() -> Any:
    """The iLLaVA page's shipped tiny VLM."""
    from ...tokens.illava.tiny_vlm import TinyVLM

    return TinyVLM.load()


def with_weights(base: Any, projector: dict[str, torch.Tensor], lora: dict[str, torch.Tensor] | None) -> Any:
    """A copy of ``base`` (sharing the encoder and the language model's unadapted weights) with another projector
    and, when ``lora`` (``lora.A.<layer>_<proj>``, ``lora.B....``, ``lora.scale``) is given, those adapters folded into
    a private copy of the adapted projections (:func:`~backend.tokens.illava.projector.lora_merged_lm`)."""
    import copy
    from types import SimpleNamespace

    from ...tokens.illava.patch import llama
    from ...tokens.illava.projector import lora_merged_lm

    new = copy.copy(base)
    proj = copy.deepcopy(base.projector)
    proj.load_state_dict({k: v.float() for k, v in projector.items()})
    proj.eval()
    new.projector = proj
    new.jigsaw_lora = None
    if lora:
        lora = {k: v.float() for k, v in lora.items()}
        lm = lora_merged_lm(base.lm.model, lora)
        new.lm = SimpleNamespace(tokenizer=base.lm.tokenizer, model=lm, base=getattr(base.lm, "base", base.lm))
        new.runner = llama.apply_patch(lm)
        new.jigsaw_lora = lora
    return new


def split_state(state: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor] | None]:
    """A post-trained file's tensors -> (projector, LoRA adapters or None)."""
    lora = {k: v for k, v in state.items() if k.startswith("lora.")}
    return {k: v for k, v in state.items() if not k.startswith("lora.")}, lora or None


def load_post_trained(vlm: Any | None = None, path: str | Path = VLM_FILE) -> Any:
    """The tiny VLM with the jigsaw post-trained projector (and adapters, when the file holds them)."""
    from ... import weights

    base = vlm or load_base()
    state, _meta = weights.load(path, made_by=VLM_COMMAND)
    return with_weights(base, *split_state(state))
