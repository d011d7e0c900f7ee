"""Invariants of DEPO (true by construction, so tests, not claims): the greedy weighted-DPP selection has a larger
log-det than random subsets of equal size and its incremental log-det is the exact one; explorability is exactly 0
for all-correct and all-wrong groups and drops pathological high-entropy wrong rollouts; the keep share decays to its
floor; the pruner always rolls out unseen samples and replays the least explored; PageRank is a distribution; the
prompt-list decoder and the configs refuse bad input with a message; the shipped policies re-evaluate to the accuracy
recorded when they were written (skipped when the shipped tiny reasoner is not the one the runs started from)."""

from __future__ import annotations

import numpy as np
import pytest

from backend.errors import InputError
from backend.reasoning.depo import explore as E
from backend.reasoning.depo import select as S
from backend.reasoning.depo.prompts import decode_prompts


@pytest.fixture(scope="module")
def ctx():
    x = np.random.default_rng(0).normal(size=(200, 24))
    return S.context(x, acc=np.random.default_rng(1).random(200))


def test_greedy_logdet_beats_random_subsets_and_is_exact(ctx) -> None:
    for k in (5, 20, 40):
        chosen, ld = S.greedy_logdet(ctx.x, ctx.weights, k, ctx.h)
        assert len(set(chosen.tolist())) == k
        assert ld == pytest.approx(S.logdet(ctx.x, ctx.weights, chosen, ctx.h), rel=1e-6, abs=1e-6)
        rand = [S.logdet(ctx.x, ctx.weights, S.select_random(ctx, k, s), ctx.h) for s in range(20)]
        assert ld > max(rand)


def test_pagerank_is_a_distribution_and_hubs_weigh_more() -> None:
    x = np.vstack([np.eye(6)[0] + 0.01 * np.random.default_rng(2).normal(size=(30, 6)), np.eye(6)[1:]])
    idx, w = S.knn_graph(S.normalise(x), 5)
    pr = S.pagerank(idx, w)
    assert pr.sum() == pytest.approx(1.0) and (pr > 0).all()
    assert pr[:30].mean() > pr[30:].mean()


def test_every_subset_strategy_has_size_k_and_distinct_items(ctx) -> None:
    for name in S.SUBSETS:
        s = S.SUBSETS[name](ctx, 30, 0)
        assert len(s) == 30 and len(set(s.tolist())) == 30, name
    assert S.subset_size(240, 0.2) == 48
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(InputError, match="share"):
            S.subset_size(100, bad)


def test_difficulty_sampling_prefers_medium_pass_rates() -> None:
    acc = np.array([0.0] * 50 + [0.5] * 50 + [1.0] * 50)
    picks = np.concatenate([S.difficulty_sample(np.arange(150), acc, 20, 0.5, 0.25, s) for s in range(30)])
    share_medium = np.mean((picks >= 50) & (picks < 100))
    assert share_medium > 0.6 and np.mean(picks < 50) > 0.0


@pytest.mark.parametrize("g", [2, 4, 8])
def test_explorability_is_zero_for_all_correct_and_all_wrong_groups(g) -> None:
    h = np.random.default_rng(g).random(g) * 3
    assert E.explorability(np.ones(g), h) == 0.0
    assert E.explorability(np.zeros(g), h) == 0.0
    assert E.explorability(np.array([1.0] + [0.0] * (g - 1)), h) > 0.0


def test_pathological_wrong_rollouts_are_dropped() -> None:
    r = np.array([1.0, 1.0, 0.0, 0.0])
    calm = E.explorability(r, np.array([1.0, 1.0, 1.0, 1.0]))
    wild = E.explorability(r, np.array([1.0, 1.0, 1.0, 9.0]))
    assert wild == pytest.approx(calm - 1.0 * abs(-0.866025) * 1.0, rel=1e-3)


def test_keep_share_decays_to_the_floor() -> None:
    shares = [E.keep_share(e, 0.4, 4) for e in range(8)]
    assert shares[0] == 1.0 and shares[4] == pytest.approx(0.4) and shares[-1] == pytest.approx(0.4)
    assert all(a >= b for a, b in zip(shares, shares[1:], strict=False))


def test_pruner_keeps_unseen_and_replays_the_least_explored() -> None:
    p = E.Pruner(floor=0.5, decay_epochs=1, history=2, replay=1)
    kept, pruned, rep = p.choose([0, 1, 2, 3], epoch=1, step=1)
    assert sorted(kept) == [0, 1] and sorted(pruned) == [2, 3] and rep == []  # all unseen: ties by index
    for i, v in enumerate([0.1, 0.9, 0.5, 0.7]):
        p.record(i, 1, v)
    p.record(3, 2, 0.7)
    kept, pruned, rep = p.choose([0, 1, 2, 3], epoch=2, step=2)
    assert sorted(kept) == [1, 3] and sorted(pruned) == [0, 2]
    kept, pruned, rep = p.choose([4, 5], epoch=2, step=3)
    assert kept == [4] and rep == [0]  # 0 and 2 were pruned at step 2, rolled out once each; 0 pruned first by id


def test_prompt_list_decoder() -> None:
    pl = decode_prompts(b"a b\n\nc d\na b\ne\nf\ng\n", name="p.txt")
    assert pl.prompts == ["a b", "c d", "e", "f", "g"] and pl.ids[1] == "line 3"
    assert any("blank" in n for n in pl.notes) and any("duplicate" in n for n in pl.notes)
    pl = decode_prompts(b"id,question,difficulty\nq1,x one,0.2\nq2,x two,0.5\nq3,x 3,1\nq4,x 4,0\nq5,x5,0.7\n",
                        name="p.csv")
    assert pl.ids[0] == "q1" and pl.difficulty == [0.2, 0.5, 1.0, 0.0, 0.7]
    for data, words in ((b"\n\n\n", "empty|too little"), (b"a\nb\n", "at least 5"),
                        (b"question,difficulty\na,2\nb,0\nc,0\nd,0\ne,0\n", "outside"),
                        (b"foo,bar\n1,2\n", "no prompt column"), ("é".encode("latin-1") * 10, "UTF-8")):
        with pytest.raises(InputError, match=words):
            decode_prompts(data, name="p.csv" if b"," in data else "p.txt")


def test_configs_refuse_bad_values() -> None:
    from backend.reasoning.depo.jobs import SelectConfig
    from backend.reasoning.depo.loop import TrainConfig

    for kw in ({"share": 0.0}, {"share": 1.2}, {"source": "nope"}, {"knn": 0}):
        with pytest.raises(InputError):
            SelectConfig(**kw)
    for kw in ({"strategy": "nope"}, {"group": 1}, {"steps": 0}, {"share": 0}, {"floor": 0}):
        with pytest.raises(InputError):
            TrainConfig(**kw)


@pytest.mark.parametrize("strategy", ["depo", "full"])
def test_shipped_policy_reevaluates_to_its_recorded_accuracy(strategy) -> None:
    import copy

    from backend import weights
    from backend.models.tinyreasoner import WEIGHTS, load_tinyreasoner
    from backend.reasoning.depo.jobs import ASSETS, pool_problems
    from backend.reasoning.depo.loop import TrainConfig, evaluate
    from backend.runtime import sha256_file

    path = ASSETS / f"depo_policy_{strategy}.safetensors"
    tensors, meta = weights.load(path, made_by="python -m backend.train depo")
    if meta.quality.get("start_sha256") != sha256_file(WEIGHTS):
        pytest.skip("the shipped tiny reasoner is not the policy these runs started from")
    lm = copy.deepcopy(load_tinyreasoner())
    lm.model.load_state_dict({k: v.float() for k, v in tensors.items()}, strict=False)
    cfg = TrainConfig()
    _, held = pool_problems(cfg)
    acc = float(evaluate(lm, held[:meta.quality["check_problems"]], cfg).mean())
    assert acc == pytest.approx(meta.quality["check_accuracy"], abs=0.034)


@pytest.mark.full
@pytest.mark.parametrize("strategy", ["depo", "full"])
def test_full_shipped_policy_reproduces_its_logged_final_accuracy(strategy) -> None:
    import copy

    from backend import weights
    from backend.models.tinyreasoner import WEIGHTS, load_tinyreasoner
    from backend.reasoning.depo.jobs import ASSETS, load_runs, pool_problems
    from backend.reasoning.depo.loop import TrainConfig, evaluate
    from backend.runtime import sha256_file

    tensors, meta = weights.load(ASSETS / f"depo_policy_{strategy}.safetensors", made_by="python -m backend.train depo")
    if meta.quality.get("start_sha256") != sha256_file(WEIGHTS):
        pytest.skip("the shipped tiny reasoner is not the policy these runs started from")
    lm = copy.deepcopy(load_tinyreasoner())
    lm.model.load_state_dict({k: v.float() for k, v in tensors.items()}, strict=False)
    cfg = TrainConfig()
    _, held = pool_problems(cfg)
    acc = float(evaluate(lm, held, cfg).mean())
    run = next(r for r in load_runs()["runs"] if r["config"]["strategy"] == strategy and r["config"]["seed"] == 0)
    assert acc == pytest.approx(run["curve"][-1]["accuracy"], abs=0.03)  # fp16 rounding of the stored weights
