"""Invariants of the Visual Jigsaw package: the reward's cases (exact, partial, invalid, format), the text and array
paths agreeing, the puzzle's answer convention, the Plackett-Luce policy (valid samples, a normalised distribution,
equivariance to the shown order), GRPO moving the policy, and the configs' refusals."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.scenes.jigsaw import jobs as J
from backend.scenes.jigsaw.policy import TilePolicy, TrainConfig, greedy, log_prob, sample, shuffled, train, truths
from backend.scenes.jigsaw.puzzle import assemble, cut, make_puzzle, to_square
from backend.scenes.jigsaw.reward import FORMAT_REWARD, GAMMA, REWARDS, parse_answer, score_perm, score_text, to_text

TRUTH4 = [3, 1, 4, 2]
TRUTH9 = [5, 9, 1, 7, 3, 2, 8, 6, 4]


# ------------------------------------------------------------------------------------------------------- reward
def test_exact_answer_scores_one_plus_format() -> None:
    for reward in REWARDS:
        s = score_text("3, 1, 4, 2", TRUTH4, reward)
        assert s.exact and s.valid and s.accuracy == 1.0 and s.total == pytest.approx(1.0 + FORMAT_REWARD)


def test_partial_answer_is_gamma_times_fraction_for_graded_and_zero_for_binary() -> None:
    wrong = [5, 9, 1, 7, 3, 2, 8, 4, 6]  # 7 of 9 positions right, a valid permutation
    s = score_text(", ".join(map(str, wrong)), TRUTH9, "graded")
    assert s.valid and not s.exact and s.fraction == pytest.approx(7 / 9)
    assert s.accuracy == pytest.approx(GAMMA * 7 / 9) and s.total == pytest.approx(GAMMA * 7 / 9 + FORMAT_REWARD)
    b = score_text(", ".join(map(str, wrong)), TRUTH9, "binary")
    assert b.accuracy == 0.0 and b.total == pytest.approx(FORMAT_REWARD)
    none_right = score_text("1, 3, 2, 4", TRUTH4, "graded")  # valid, nothing in place
    assert none_right.valid and none_right.accuracy == 0.0


@pytest.mark.parametrize("answer", ["3, 1, 3, 2", "3, 1, 4", "3, 1, 4, 2, 5", "0, 1, 4, 2", "3, 1, 4, 9"])
def test_invalid_answer_scores_zero_accuracy_but_keeps_the_format_reward(answer: str) -> None:
    for reward in REWARDS:
        s = score_text(answer, TRUTH4, reward)
        assert not s.valid and not s.exact and s.accuracy == 0.0 and s.total == pytest.approx(FORMAT_REWARD)


@pytest.mark.parametrize("answer", ["", "three, one, four, two", "3; 1; 4; 2", "[3, 1, 4, 2]", "3, 1, 4, 2."])
def test_unparseable_answer_earns_nothing(answer: str) -> None:
    s = score_text(answer, TRUTH4)
    assert s.parsed is None and s.total == 0.0 and s.format == 0.0


def test_formats_that_parse() -> None:
    assert parse_answer("3 1 4 2") == TRUTH4
    assert parse_answer(" 3,1 , 4,2 ") == TRUTH4
    assert parse_answer("\\boxed{3, 1, 4, 2}") == TRUTH4
    assert score_text("\\boxed{3,1,4,2}", TRUTH4).exact


def test_array_path_equals_text_path() -> None:
    truth0 = np.array(TRUTH4) - 1
    perms = np.array(list(itertools.permutations(range(4))))
    for reward in REWARDS:
        fast = score_perm(perms, truth0[None], reward)
        slow = [score_text(to_text(p), TRUTH4, reward).total for p in perms]
        np.testing.assert_allclose(fast, slow)
    bad = np.array([[0, 0, 1, 2]])
    assert score_perm(bad, truth0[None])[0] == pytest.approx(FORMAT_REWARD)


# ------------------------------------------------------------------------------------------------------- puzzle
def test_truth_restores_the_image() -> None:
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (168, 168, 3), dtype=np.uint8)
    for grid in (2, 3):
        p = make_puzzle(img, grid, seed=4)
        assert not (p.order == np.arange(p.n)).all()
        np.testing.assert_array_equal(assemble(p.shown[p.truth], grid), p.image)
        np.testing.assert_array_equal(p.shown, cut(p.image, grid)[p.order])


def test_to_square_crops_and_refuses_tiny_images() -> None:
    assert to_square(np.zeros((50, 80, 3), np.uint8)).shape == (168, 168, 3)
    assert to_square(np.zeros((40, 40), np.uint8)).shape == (168, 168, 3)
    with pytest.raises(InputError):
        to_square(np.zeros((8, 8, 3), np.uint8))


# ------------------------------------------------------------------------------------------------------- policy
def test_plackett_luce_samples_are_permutations_and_probabilities_sum_to_one() -> None:
    torch.manual_seed(0)
    scores = torch.randn(2, 3, 3)
    perms = sample(scores, 50, torch.Generator().manual_seed(1))
    assert (perms.sort(-1).values == torch.arange(3)).all()
    allp = torch.tensor(list(itertools.permutations(range(3))))
    lp = log_prob(scores[:1].expand(6, -1, -1), allp).sum(1)
    assert float(lp.exp().sum()) == pytest.approx(1.0, abs=1e-5)
    g = greedy(scores)
    assert (g.sort(-1).values == torch.arange(3)).all()


def test_policy_is_equivariant_to_the_shown_order() -> None:
    torch.manual_seed(0)
    model = TilePolicy(4).eval()
    feats = torch.randn(1, 4, 5, 384)
    perm = torch.tensor([2, 0, 3, 1])
    with torch.no_grad():
        a, b = model(feats), model(feats[:, perm])
    torch.testing.assert_close(b, a[:, perm], atol=1e-5, rtol=1e-4)


def test_shuffled_and_truths_agree() -> None:
    orders = torch.tensor([[2, 0, 3, 1]])
    feats = torch.arange(4.0).view(1, 4, 1, 1).expand(1, 4, 5, 384)
    x = shuffled(feats, orders)
    t = truths(orders)
    assert torch.equal(x[0, t[0], 0, 0], torch.arange(4.0))


def test_grpo_training_raises_the_reward_on_an_easy_task() -> None:
    """2 x 2 tiles whose features encode their position: a few dozen GRPO steps must lift the mean reward."""
    torch.manual_seed(0)
    base = torch.randn(4, 5, 384)
    feats = (base[None] + 0.1 * torch.randn(32, 4, 5, 384)).half()
    res = train(TrainConfig(grid=2, steps=40, batch=8, group=8, eval_every=20, seed=0), feats, {})
    first, last = np.mean(res.rewards[:5]), np.mean(res.rewards[-5:])
    assert last > first + 0.2, (first, last)


# ------------------------------------------------------------------------------------------------------- configs
@pytest.mark.parametrize("kwargs", [{"grid": 4}, {"grid": 1}, {"grid": "x"}, {"seed": 7}, {"shuffle": -1},
                                    {"answer": "1," * 150}])
def test_solve_config_refuses(kwargs: dict) -> None:
    with pytest.raises(InputError):
        J.SolveConfig(**kwargs)


@pytest.mark.parametrize("kwargs", [{"source": "nope"}, {"count": 0}, {"count": 10_000}, {"seeds": (9,)},
                                    {"grids": (5,)}])
def test_eval_config_refuses(kwargs: dict) -> None:
    with pytest.raises(InputError):
        J.EvalConfig(**kwargs)


def test_configs_and_jobs_pickle() -> None:
    for cfg in (J.SolveConfig(grid=2, answer="1, 2, 3, 4"), J.EvalConfig(count=8), J.VLMConfig(recheck_scenes=1)):
        assert pickle.loads(pickle.dumps(cfg)) == cfg
    for fn in (J.run_solve, J.run_evaluate, J.run_vlm):
        assert pickle.loads(pickle.dumps(fn)) is fn


# ---------------------------------------------------------------------------------------------------- clip ordering
def _drift(frames: np.ndarray) -> float:
    """Mean horizontal shift (pixels, + = right) of the content from each frame to the next (best shift of the grey
    images over the central columns)."""
    g = frames.astype(float).mean(-1)
    shifts = []
    for a, b in zip(g[:-1], g[1:], strict=True):
        shifts.append(min(range(-40, 41), key=lambda s: np.abs(np.roll(a, s, axis=1)[:, 48:-48] - b[:, 48:-48]).mean()))
    return float(np.mean(shifts))


@pytest.mark.parametrize("source", ["clips_val", "photo_pans"])
def test_clips_have_an_arrow_of_time(source: str) -> None:
    from backend.scenes.jigsaw.ordering import FRAMES, clip_frames

    for index in range(3):
        frames = clip_frames(source, index)
        assert frames.shape == (FRAMES, 168, 168, 3) and frames.dtype == np.uint8
        assert _drift(frames) < -2  # the scene drifts left: the camera moves right
        assert not np.array_equal(frames[0], frames[1])


def test_clip_inputs_are_checked() -> None:
    from backend.scenes.jigsaw.jobs import OrderConfig
    from backend.scenes.jigsaw.ordering import clip_frames, pan_over

    with pytest.raises(InputError, match="at least 64 pixels"):
        pan_over(np.zeros((40, 300, 3), np.uint8), 0)
    with pytest.raises(InputError, match="3 to 8 frames"):
        clip_frames("clips_val", 0, frames=9)
    with pytest.raises(InputError, match="clip source"):
        OrderConfig(source="scenes_val")
    with pytest.raises(InputError, match="3 to 8 frames"):
        TrainConfig(frames=2)
    assert TrainConfig(frames=4).n == 4 and TrainConfig(grid=3).n == 9


def test_run_order_truth_puts_the_frames_back_in_time_order() -> None:
    from backend.scenes.jigsaw.jobs import OrderConfig, run_order
    from backend.scenes.jigsaw.ordering import clip_frames

    res = run_order(OrderConfig(source="clips_val", index=2, shuffle=5, answer="1, 2, 3, 4"))
    frames = clip_frames("clips_val", 2)
    assert np.array_equal(res.shown[[t - 1 for t in res.truth]], frames)
    assert res.grid == 0 and len(res.answers) == 2 and res.race["valid"]
    for a in res.answers:
        assert sorted(a["answer"]) == [1, 2, 3, 4] and 0 < a["confidence"] <= 1
    from backend.scenes.jigsaw.puzzle import photo

    own = run_order(OrderConfig(index=1), image=photo("coffee"))
    assert own.shown.shape == (4, 168, 168, 3) and own.config["source"] == "upload"


def test_shipped_clip_policies_order_held_out_clips() -> None:
    """Chance of an exact order is 1/24; the shipped policies (seed 0) re-scored on 16 held-out procedural clips x 4
    shuffles. Pans over photographs are reported by the evaluation (another source, far lower)."""
    from backend.scenes.jigsaw.jobs import EvalConfig, run_evaluate

    r = run_evaluate(EvalConfig(source="clips_val", count=16, seeds=(0,)))
    assert r.puzzles == 64 and set(r.means) == {"clip"}
    for reward, m in r.means["clip"].items():
        assert m["solve"] >= 0.5, (reward, m)


# ------------------------------------------------------------------------------------------------------------- vlm
@pytest.fixture(scope="module")
def tiny_vlm():  # noqa: ANN201
    from backend.scenes.jigsaw.vlm import load_base

    return load_base()


def test_vlm_answer_scores_are_the_constrained_teacher_forced_log_probabilities(tiny_vlm) -> None:  # noqa: ANN001
    """The prefix-tree scores of the 24 answers equal teacher-forced log-probabilities of the full answer sequences
    (each digit normalised over the digits not used yet), and they form a distribution."""
    from backend.scenes.jigsaw.puzzle import source_image
    from backend.scenes.jigsaw.vlm import PERMS, JigsawScorer, puzzle_image

    sc = JigsawScorer(tiny_vlm)
    img, _ = puzzle_image(source_image("scenes_val", 3), 7)
    tok = sc.tokens([img])
    s = sc.scores_from_tokens(torch.cat([tok, tok]))
    assert s.shape == (2, 24) and torch.allclose(s[0], s[1], atol=1e-4)
    assert torch.allclose(s.logsumexp(-1), torch.zeros(2), atol=1e-5)
    m = tiny_vlm.lm.model
    with torch.no_grad():
        emb = m.get_input_embeddings()
        seq = torch.cat([tiny_vlm.prefix_emb, tiny_vlm.projector(tok), emb(sc.q_ids)[None]], 1)
        for i in (0, 9, 23):
            p = PERMS[i]
            h = m.model(inputs_embeds=torch.cat([seq, emb(sc.digits[p[:3]])[None]], 1)).last_hidden_state[0, -4:-1]
            lg = (h @ m.lm_head.weight[sc.digits].T).float()
            used, total = [], 0.0
            for k in range(3):
                row = lg[k].clone()
                row[used] = -torch.inf
                total += float(row.log_softmax(-1)[p[k]])
                used.append(int(p[k]))
            assert total == pytest.approx(float(s[0, i]), abs=1e-3)


def test_vlm_grpo_moves_only_what_it_trains_and_leaves_the_base_model(tiny_vlm) -> None:  # noqa: ANN001
    """One GRPO step on a training puzzle: the base model scores as before (its hooks removed, its gradient flags
    restored); the post-trained copy differs; its tag names both the projector and the adapters."""
    from backend.scenes.jigsaw import vlm as V
    from backend.scenes.jigsaw.vlm_grpo import VLMTrainConfig, train

    sc = V.JigsawScorer(tiny_vlm)
    tok, truth = V.puzzle_tokens(sc, "scenes_val", 2)
    before = sc.scores_from_tokens(tok)
    flags = [p.requires_grad for p in tiny_vlm.lm.model.parameters()]
    state, lora, hist = train(tiny_vlm, VLMTrainConfig(steps=1, batch=1, train_puzzles=1, curve_puzzles=1,
                                                       eval_every=1, lr=1e-3, lora_rank=2))
    assert torch.equal(sc.scores_from_tokens(tok), before)
    assert [p.requires_grad for p in tiny_vlm.lm.model.parameters()] == flags
    assert len(hist["reward"]) == 1 and [c["step"] for c in hist["curve"]] == [0, 1]
    assert set(state) == set(tiny_vlm.projector.state_dict()) and {k.split(".")[1] for k in lora} == {"A", "B",
                                                                                                       "scale"}
    new = V.with_weights(tiny_vlm, state, lora)
    assert V.model_tag(new) != V.model_tag(tiny_vlm)
    assert not torch.allclose(V.JigsawScorer(new).scores_from_tokens(tok), before)
    with pytest.raises(InputError):
        VLMTrainConfig(batch=0)
    with pytest.raises(InputError, match="Nothing to train"):
        VLMTrainConfig(lr=0.0, lora_rank=0)
    # a frozen projector (lr 0): the adapters alone move, the projector's tensors come back as shipped
    state, lora, _ = train(tiny_vlm, VLMTrainConfig(steps=1, batch=1, train_puzzles=1, curve_puzzles=1, eval_every=1,
                                                    lr=0.0, lora_rank=2))
    shipped = tiny_vlm.projector.state_dict()
    assert all(torch.equal(v, shipped[k].half()) for k, v in state.items()) and lora
    assert not torch.allclose(V.JigsawScorer(V.with_weights(tiny_vlm, state, lora)).scores_from_tokens(tok), before)
