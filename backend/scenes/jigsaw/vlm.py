"""Policy (b): the iLLaVA page's tiny vision-language model (:mod:`backend.tokens.illava.tiny_vlm`: frozen DINOv2
ViT-S/14 -> trained projector -> SmolLM2-135M with merged LoRA adapters) post-trained on 2 x 2 jigsaws with GRPO.

The puzzle is one image: the four shuffled tiles laid out 2 x 2 at ``JIGSAW_PX = 112`` pixels (64 image tokens;
each tile is 4 x 4 patches), labelled 1-4 in raster order of the layout; the prompt is the model's own
``"Image:" <image tokens> "\\nQ: <QUESTION>\\nA: "`` and the answer four digits (``"3142"``: for each original
position in raster order, the label of the shown tile that belongs there). The model scores the closed set of the 24
permutations: ``score(sigma)`` = the language model's log-likelihood of the four digit tokens (teacher-forced, each
normalised over the four digit tokens 1-4; one pass over the prompt, then the 24 continuations on its key/value
cache), and the
policy is the softmax of the 24 scores. GRPO (:func:`backend.reasoning.grpo.grpo_loss`, no KL): per step one puzzle,
``group`` = 8 answers drawn from that policy, the graded reward, one Adam step on the projector (the only part that
changes; the vision encoder, the language model and the LoRA adapters stay as shipped).

Before and after: the jigsaw solve rate (argmax of the 24 scores) on held-out scenes and photographs, and the
accuracy on held-out scene questions of the iLLaVA page (:mod:`backend.tokens.illava.scenes`, the unreduced model at
224 pixels), with a paired bootstrap interval of the change over questions. Departures: the paper post-trains all of
Qwen2.5-VL-7B on 118k COCO images with 16 free-text samples per prompt and a reasoning format; here 1 puzzle per step,
a closed answer set, 112-pixel puzzles and only the projector (CPU budget).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...runtime import ASSETS
from .puzzle import make_puzzle, source_image
from .reward import score_perm

JIGSAW_PX = 112
QUESTION = "The image is cut into four tiles and shuffled. Give the tile numbers in their original order."
PERMS = torch.tensor(list(itertools.permutations(range(4))))  # [24, 4]
VLM_FILE = ASSETS / "jigsaw_vlm_projector.safetensors"
VLM_COMMAND = "python -m backend.train jigsaw --part vlm"
TRAIN_SEED0 = 40_000  # scene-package seeds of the VLM's training puzzles (disjoint from the policy's 0..399)
EVAL_PUZZLES = 12
EVAL_SEED = 32_000


def puzzle_image(image: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A 2 x 2 puzzle of an image as the VLM sees it: uint8 ``[112, 112, 3]`` and the 0-based truth ``[4]``."""
    from PIL import Image

    p = make_puzzle(image, 2, seed)
    from .puzzle import assemble

    img = assemble(p.shown, 2)
    img = np.asarray(Image.fromarray(img).resize((JIGSAW_PX, JIGSAW_PX), Image.Resampling.BICUBIC), np.uint8)
    return img, p.truth


class JigsawScorer:
    """The closed-set scorer over a :class:`~backend.tokens.illava.tiny_vlm.TinyVLM` (its projector may be swapped)."""

    def __init__(self, vlm: Any) -> None:
        tok = vlm.lm.tokenizer
        self.vlm = vlm
        q = tok("\nQ: " + QUESTION + "\nA:", add_special_tokens=False)["input_ids"]
        sample = tok(" 1234", add_special_tokens=False)["input_ids"]  # [space, 1, 2, 3, 4]
        self.digits = torch.tensor(sample[1:])
        self.q_ids = torch.tensor(q + sample[:1])

    def scores(self, images: list[np.ndarray], grad: bool = False) -> torch.Tensor:
        """Log-likelihoods of the 24 permutations for one image: ``[24]`` (one image at a time)."""
        from PIL import Image

        vlm = self.vlm
        model = vlm.lm.model
        px = vlm.vision.preprocess([Image.fromarray(images[0])], size=JIGSAW_PX)
        with torch.no_grad():
            tokens = vlm.vision.model(pixel_values=px).last_hidden_state[:, vlm.adapter.prefix:]
            q = model.get_input_embeddings()(self.q_ids)[None]
        ctx = torch.enable_grad() if grad else torch.no_grad()
        with ctx:
            emb = vlm.projector(tokens)
            seq = torch.cat([vlm.prefix_emb, emb, q], 1)
            out = model.model(inputs_embeds=seq, use_cache=True)
            cache = out.past_key_values
            cache.batch_repeat_interleave(len(PERMS))
            cont = self.digits[PERMS[:, :3]]
            mask = torch.ones(len(PERMS), seq.shape[1] + 3, dtype=torch.long)
            h2 = model.model(input_ids=cont, past_key_values=cache, attention_mask=mask).last_hidden_state
            h = torch.cat([out.last_hidden_state[:, -1:].expand(len(PERMS), 1, -1), h2], 1)  # [24, 4, d]
            w = model.lm_head.weight[self.digits]  # [4, d]: the digit rows of the output layer
            lp = torch.log_softmax((h @ w.T).float(), -1)  # [24, 4, 4]
            return lp.gather(2, PERMS[:, :, None]).squeeze(2).sum(1)


def jigsaw_eval(scorer: JigsawScorer, source: str, count: int = EVAL_PUZZLES) -> list[int]:
    """Exact solves (0/1 per puzzle) of the argmax permutation on ``count`` fixed puzzles of a source."""
    out = []
    for i in range(int(count)):
        img, truth = puzzle_image(source_image(source, i), EVAL_SEED + i)
        s = scorer.scores([img])
        out.append(int((PERMS[int(s.argmax())].numpy() == truth).all()))
    return out


def qa_correct(vlm: Any, n_scenes: int) -> tuple[list[int], list[str]]:
    """Per-question correctness (0/1) of the unreduced model on the first ``n_scenes`` held-out iLLaVA scenes, and the
    question kinds."""
    from ...tokens.illava import scenes
    from ...tokens.illava.evaluation import evaluate

    scene_list = [scenes.make_scene(scenes.HELDOUT_SEED0 + i) for i in range(int(n_scenes))]
    res = evaluate(vlm, scene_list)
    qs = [q for s in scene_list for q in s.questions]
    return [int(p == q.answer) for p, q in zip(res.predictions, qs, strict=True)], [q.kind for q in qs]


QA_CHUNK = 22
QA_BOUNDS = (0, 22, 44, 66, 86)
POST_CACHE = "post_projector.pt"


def _qa_cache(tag: str, start: int, stop: int) -> Path:
    from ...runtime import cache_dir

    return cache_dir() / "jigsaw" / f"qa_{tag}_{int(start)}_{int(stop)}.json"


def qa_chunk(vlm: Any, tag: str, start: int, stop: int) -> tuple[list[int], list[str]]:
    """:func:`qa_correct` on held-out scenes ``start .. stop``, kept under ``cache_dir()/jigsaw`` by ``tag`` (the
    model's projector digest), so that several processes can share the evaluation."""
    import json

    from ...tokens.illava import scenes
    from ...tokens.illava.evaluation import evaluate

    path = _qa_cache(tag, start, stop)
    if path.exists():
        d = json.loads(path.read_text())
        return d["correct"], d["kinds"]
    scene_list = [scenes.make_scene(scenes.HELDOUT_SEED0 + i) for i in range(int(start), int(stop))]
    res = evaluate(vlm, scene_list)
    qs = [q for sc in scene_list for q in sc.questions]
    correct = [int(p == q.answer) for p, q in zip(res.predictions, qs, strict=True)]
    kinds = [q.kind for q in qs]
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
    """A digest of a projector's weights (names the cached question answers)."""
    import hashlib

    h = hashlib.sha256()
    for k, v in sorted(projector.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().float().numpy().tobytes())
    return h.hexdigest()[:16]


def qa_range(vlm: Any, n_scenes: int, order: str = "forward") -> tuple[list[int], list[str]]:
    """Per-question correctness and kinds on the first ``n_scenes`` held-out scenes, chunk by chunk (cached)."""
    tag = projector_tag(vlm.projector)
    parts = chunks(n_scenes)
    todo = parts if order == "forward" else parts[::-1]
    for a, b in todo:
        qa_chunk(vlm, tag, a, b)
    out = [qa_chunk(vlm, tag, a, b) for a, b in parts]
    return [c for o in out for c in o[0]], [k for o in out for k in o[1]]


def save_post_cache(vlm: Any) -> Path:
    """The post-trained projector as a plain tensor file in the cache (read by the evaluation workers of ``--part vlm-post``)."""
    from ...runtime import cache_dir

    path = cache_dir() / "jigsaw" / POST_CACHE
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({k: v.detach().clone() for k, v in vlm.projector.state_dict().items()}, path)
    return path


def evaluate_chunks(which: str, chunk_ids: list[int], n_scenes: int) -> None:
    """Evaluate some chunks of the question set for ``which`` = ``base`` or ``post`` (the cached post-trained
    projector), so that the training process finds them cached."""
    import copy

    from ...runtime import cache_dir

    vlm = load_base()
    if which == "post":
        path = cache_dir() / "jigsaw" / POST_CACHE
        while not path.exists():
            time.sleep(20)
        time.sleep(2)
        vlm = copy.copy(vlm)
        proj = copy.deepcopy(vlm.projector)
        proj.load_state_dict(torch.load(path, weights_only=True))
        proj.eval()
        vlm.projector = proj
    tag = projector_tag(vlm.projector)
    parts = chunks(n_scenes)
    for i in chunk_ids:
        qa_chunk(vlm, tag, *parts[i])


def load_base() -> Any:
    """The iLLaVA page's shipped tiny VLM."""
    from ...tokens.illava.tiny_vlm import TinyVLM

    return TinyVLM.load()


def load_post_trained(vlm: Any | None = None, path: str | Path = VLM_FILE) -> Any:
    """The tiny VLM with the jigsaw post-trained projector (a new object sharing the encoder and language model)."""
    import copy

    from ... import weights

    base = vlm or load_base()
    state, _meta = weights.load(path, made_by=VLM_COMMAND)
    new = copy.copy(base)
    proj = copy.deepcopy(base.projector)
    proj.load_state_dict({k: v.float() for k, v in state.items()})
    proj.eval()
    new.projector = proj
    return new


def train(vlm: Any, steps: int, group: int = 8, lr: float = 1e-4, seed: int = 0,
          log: Callable[[str], None] | None = None) -> tuple[Any, dict[str, list]]:
    """GRPO on the projector of a copy of ``vlm``; returns the post-trained VLM and its per-step records."""
    import copy

    from ...reasoning.grpo import GRPOConfig, group_advantages, grpo_loss

    torch.manual_seed(seed)
    new = copy.copy(vlm)
    proj = copy.deepcopy(vlm.projector)
    for p in proj.parameters():
        p.requires_grad_(True)
    proj.train()
    new.projector = proj
    scorer = JigsawScorer(new)
    opt = torch.optim.Adam(proj.parameters(), lr=lr)
    cfg = GRPOConfig(beta=0.0)
    gen = torch.Generator().manual_seed(50_000 + seed)
    hist: dict[str, list] = {"reward": [], "p_truth": []}
    for step in range(int(steps)):
        img, truth = puzzle_image(source_image("scenes", TRAIN_SEED0 + step), 60_000 + step)
        scores = scorer.scores([img], grad=True)
        logp = torch.log_softmax(scores, 0)
        pick = torch.multinomial(logp.detach().exp(), group, replacement=True, generator=gen)
        rewards = score_perm(PERMS[pick].numpy(), truth[None], "graded")
        adv = group_advantages(torch.from_numpy(rewards)[None].float()).flatten()
        lp = logp[pick][:, None]
        loss, _ = grpo_loss(lp, lp.detach(), adv, torch.ones_like(lp), cfg)
        opt.zero_grad()
        loss.backward()
        opt.step()
        t_idx = int(((PERMS.numpy() == truth).all(1)).argmax())
        hist["reward"].append(round(float(rewards.mean()), 4))
        hist["p_truth"].append(round(float(logp[t_idx].detach().exp()), 4))
        if log and (step + 1) % 10 == 0:
            log(f"vlm step {step + 1}: reward {np.mean(hist['reward'][-10:]):.3f} "
                f"p(truth) {np.mean(hist['p_truth'][-10:]):.3f}")
    proj.eval()
    for p in proj.parameters():
        p.requires_grad_(False)
        p.data = p.data.half().float()  # the shipped precision: every evaluation uses the stored weights
    return new, hist


def rescore_questions(path: str | Path, qa_scenes: int, command: str,
                      log: Callable[[str], None] | None = None) -> Path:
    """Re-evaluate the question accuracy before and after of a file written by :func:`train_and_save` on the first
    ``qa_scenes`` held-out scenes (cached chunks) and write it again with the same weights, training record and
    jigsaw numbers: the file :func:`train_and_save` would write with that ``qa_scenes``."""
    from ... import weights
    from ...stats import paired_bootstrap

    state, meta = weights.load(path, made_by=VLM_COMMAND)
    base = load_base()
    new = load_post_trained(base, path)
    qa_before, kinds = qa_range(base, qa_scenes)
    qa_after, _ = qa_range(new, qa_scenes)
    ci = paired_bootstrap(lambda a, b: float(np.mean(a) - np.mean(b)), qa_after, qa_before, seed=0)
    quality = dict(meta.quality)
    quality.update({"qa_questions": len(qa_before), "qa_scenes": int(qa_scenes),
                    "qa_accuracy_before": round(float(np.mean(qa_before)), 4),
                    "qa_accuracy_after": round(float(np.mean(qa_after)), 4),
                    "qa_change": round(ci.mean, 4), "qa_change_ci": [round(ci.low, 4), round(ci.high, 4)]})
    extra = dict(meta.extra)
    extra.update({"qa_before": qa_before, "qa_after": qa_after, "qa_kinds": kinds})
    seeds = dict(meta.data_seeds or {})
    seeds["qa"] = ["illava heldout", 0, int(qa_scenes)]
    if log:
        log(f"quality {quality}")
    return weights.save(path, state, config=meta.config, command=command, data_seeds=seeds, quality=quality,
                        extra=extra)


def train_and_save(steps: int, qa_scenes: int, command: str, out_dir: Path | None = None,
                   log: Callable[[str], None] | None = None) -> Path:
    """Train, evaluate before and after, and write the projector with its quality (see the module docstring)."""
    from ... import weights
    from ...stats import paired_bootstrap

    log = log or (lambda m: None)
    t0 = time.perf_counter()
    base = load_base()
    before = {src: jigsaw_eval(JigsawScorer(base), src) for src in ("scenes_val", "photos")}
    log(f"jigsaw before: {({k: float(np.mean(v)) for k, v in before.items()})} ({time.perf_counter() - t0:.0f} s)")
    t1 = time.perf_counter()
    new, hist = train(base, steps, log=log)
    train_s = time.perf_counter() - t1
    save_post_cache(new)
    after = {src: jigsaw_eval(JigsawScorer(new), src) for src in ("scenes_val", "photos")}
    log(f"jigsaw after: {({k: float(np.mean(v)) for k, v in after.items()})} ({time.perf_counter() - t0:.0f} s)")
    qa_before, kinds = qa_range(base, qa_scenes, order="backward")
    qa_after, _ = qa_range(new, qa_scenes, order="backward")
    ci = paired_bootstrap(lambda a, b: float(np.mean(a) - np.mean(b)), qa_after, qa_before, seed=0)
    quality = {
        "jigsaw_solve_before": {k: round(float(np.mean(v)), 4) for k, v in before.items()},
        "jigsaw_solve_after": {k: round(float(np.mean(v)), 4) for k, v in after.items()},
        "qa_questions": len(qa_before), "qa_scenes": int(qa_scenes),
        "qa_accuracy_before": round(float(np.mean(qa_before)), 4),
        "qa_accuracy_after": round(float(np.mean(qa_after)), 4),
        "qa_change": round(ci.mean, 4), "qa_change_ci": [round(ci.low, 4), round(ci.high, 4)],
        "train_seconds": round(train_s, 1), "command": "python -m backend jigsaw vlm --json"}
    log(f"quality {quality}")
    path = (out_dir / VLM_FILE.name) if out_dir else VLM_FILE
    state = {k: v.detach().half() for k, v in new.projector.state_dict().items()}
    weights.save(path, state, config={"base": "assets/illava_projector.safetensors", "steps": int(steps), "group": 8,
                                      "lr": 1e-4, "reward": "graded", "jigsaw_px": JIGSAW_PX, "question": QUESTION},
                 command=command,
                 data_seeds={"train": ["scenes", TRAIN_SEED0, TRAIN_SEED0 + int(steps)], "shuffles": 60_000,
                             "eval": [EVAL_SEED, EVAL_PUZZLES], "qa": ["illava heldout", 0, int(qa_scenes)],
                             "samples": 50_000},
                 quality=quality, extra={"history": hist, "qa_before": qa_before, "qa_after": qa_after,
                                         "qa_kinds": kinds, "jigsaw_before": before, "jigsaw_after": after})
    log(f"wrote {path.name} in {time.perf_counter() - t0:.0f} s")
    return path
