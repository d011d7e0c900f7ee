"""The candidate cache (backend/reasoning/candidates.py): N candidates per problem are sampled once, stored with
their model, settings, seed and steps under a sha256 key, and read back without sampling; any verifier scores them;
BoN@n and weighted-BoN@n over the cache equal brute-force enumeration of every subset (and, with replacement, of
every tuple); bad input is an InputError."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from backend.errors import InputError
from backend.reasoning import candidates as C
from backend.reasoning import sampling as S
from backend.reasoning import tasks


def brute_force(scores, values, n, beta=math.inf, replace=False):
    """E[value of the chosen candidate] over every subset (or tuple, with replacement) of size n."""
    N = len(scores)
    draws = itertools.product(range(N), repeat=n) if replace else itertools.combinations(range(N), n)
    total = count = 0.0
    for d in draws:
        s = np.array([scores[i] for i in d])
        if math.isinf(beta):
            w = (s == s.max()).astype(float)
        else:
            w = np.exp(beta * (s - s.max()))
        total += float(w @ np.array([values[i] for i in d])) / w.sum()
        count += 1
    return total / count


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(0)
    scores = np.round(rng.uniform(0, 1, (3, 7)), 1)  # rounded: ties within a problem
    values = rng.integers(0, 2, (3, 7)).astype(float)
    return scores, values


def test_exact_bon_equals_enumerating_every_subset(case):
    scores, values = case
    curve = C.bon_at(scores, values)
    for n in range(1, 8):
        want = np.mean([brute_force(s, v, n) for s, v in zip(scores, values, strict=True)])
        assert curve[n - 1] == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("beta", [0.5, 3.0, 20.0])
def test_exact_weighted_bon_equals_enumerating_every_subset(case, beta):
    scores, values = case
    curve = C.weighted_bon_at(scores, values, beta=beta)
    for n in range(1, 8):
        want = np.mean([brute_force(s, v, n, beta) for s, v in zip(scores, values, strict=True)])
        assert curve[n - 1] == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("beta", [math.inf, 2.0])
def test_with_replacement_equals_enumerating_every_tuple(case, beta):
    scores, values = case[0][:, :5], case[1][:, :5]
    curve = (C.bon_at(scores, values, [1, 2, 3], replace=True) if math.isinf(beta)
             else C.weighted_bon_at(scores, values, [1, 2, 3], beta=beta, replace=True))
    for r, n in enumerate([1, 2, 3]):
        want = np.mean([brute_force(s, v, n, beta, replace=True) for s, v in zip(scores, values, strict=True)])
        assert curve[r] == pytest.approx(want, abs=1e-9)


def test_limits_of_beta_and_n(case):
    scores, values = case
    assert np.allclose(C.weighted_bon_at(scores, values, beta=0.0), values.mean())
    assert np.allclose(C.weighted_bon_at(scores, values, beta=1e6), C.bon_at(scores, values))
    assert C.bon_at(scores, values, [1])[0] == pytest.approx(values.mean())
    oracle = C.bon_at(values, values, [7])[0]  # BoN@N with the values as scores: any right candidate
    assert oracle == pytest.approx(values.max(1).mean())


def test_cache_samples_once_stores_keys_and_scores_any_verifier(tmp_path, monkeypatch):
    from backend.models.tinyreasoner import load_tinyreasoner

    r = load_tinyreasoner()
    probs = tasks.generate(3, "heldout", seed=1)
    cfg = S.SamplingConfig(n=4, max_new_tokens=64, temperature=1.0, boundaries=(";",))
    path = tmp_path / "cands.jsonl"
    sets = C.CandidateCache(path).sample(r, [p.question for p in probs], cfg, seed=5, name="tiny")
    assert len(path.read_text().splitlines()) == 3
    direct = S.sample(r, [p.question for p in probs], cfg, seed=5)
    assert [[c.text for c in s.candidates] for s in sets] == direct.text
    c0 = sets[0].candidates[0]
    assert c0.tokens == direct.tokens(0, 0) and c0.logprob == pytest.approx(float(direct.logprobs[0, 0].sum()),
                                                                           abs=1e-4)
    assert c0.steps[-1]["end"] == len(c0.tokens) and "".join(st["text"] for st in c0.steps) == c0.text
    assert sets[0].key == C.cache_key("tiny", cfg, 5, probs[0].question)
    assert len({C.cache_key("tiny", cfg, 6, probs[0].question), C.cache_key("tiny2", cfg, 5, probs[0].question),
                C.cache_key("tiny", S.SamplingConfig(n=5), 5, probs[0].question), sets[0].key}) == 4

    def no_sampling(*a, **k):
        raise AssertionError("sampled again")

    monkeypatch.setattr(C, "sample", no_sampling)
    again = C.CandidateCache(path).sample(r, [p.question for p in probs][::-1], cfg, seed=5, name="tiny")
    assert [s.key for s in again] == [s.key for s in sets][::-1]
    assert again[-1].candidates[0].tokens == c0.tokens

    right = C.correctness(sets, [p.answer for p in probs])
    length = C.score(sets, lambda q, c: -len(c.tokens))
    logp = C.score(sets, lambda q, c: c.logprob)
    assert right.shape == length.shape == logp.shape == (3, 4)
    for sc in (length, logp):
        assert C.bon_at(sc, right, [1])[0] == pytest.approx(right.mean())
        assert 0.0 <= C.weighted_bon_at(sc, right, [4], beta=1.0)[0] <= 1.0
    assert C.bon_at(right, right)[-1] == pytest.approx(right.max(1).mean())
    assert C.model_id(r).startswith("tinyreasoner@")


def test_bad_input_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="from 1 to N = 3"):
        C.bon_at([[0.1, 0.2, 0.3]], [[1, 0, 1]], [4])
    with pytest.raises(InputError, match="both be"):
        C.bon_at([[0.1, 0.2]], [[1, 0, 1]])
    with pytest.raises(InputError, match="finite"):
        C.weighted_bon_at([[0.1, float("nan")]], [[1, 0]])
    with pytest.raises(InputError, match="beta"):
        C.weighted_bon_at([[0.1, 0.2]], [[1, 0]], beta=-1.0)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": 1}\n', encoding="utf-8")
    with pytest.raises(InputError, match="Line 1"):
        C.CandidateCache(bad)
    with pytest.raises(InputError, match="non-empty list"):
        C.CandidateCache().sample(None, [], S.SamplingConfig())


def test_gzip_cache_round_trips(tmp_path):
    from backend.models.tinyreasoner import load_tinyreasoner

    r = load_tinyreasoner()
    cfg = S.SamplingConfig(n=2, max_new_tokens=16, temperature=1.0)
    path = tmp_path / "c.jsonl.gz"
    a = C.CandidateCache(path).sample(r, ["Compute 2 + 3.", "Compute 4 * 5."], cfg, seed=1)
    C.CandidateCache(path).sample(r, ["Compute 7 - 1."], cfg, seed=1)  # appends a second gzip member
    back = C.CandidateCache(path)
    assert len(back) == 3 and back.get(a[0].key).candidates[0].tokens == a[0].candidates[0].tokens
    assert path.read_bytes()[:2] == b"\x1f\x8b"


def test_vote_at_by_hand():
    a = np.array([[1.0, 1.0, 2.0, np.nan]])
    y = np.array([[True, True, False, False]])
    assert C.vote_at(a, y, ns=[4])[0] == 1.0  # 1 has two votes, 2 one, no answer never wins
    assert C.vote_at(a, y, np.array([[0.1, 0.1, 0.9, 5.0]]), ns=[4])[0] == 0.0  # weighted: 2 wins
    # n = 2 exactly: subsets {1,1}: right; {1,2}: tie -> 1/2; {1,nan}: right; {2,nan}: wrong; {1,2} twice, {1,nan} twice
    exact = (1 + 0.5 + 0.5 + 1 + 1 + 0) / 6
    assert C.vote_at(a, y, ns=[2], draws=4000, seed=1)[0] == pytest.approx(exact, abs=0.02)
    with pytest.raises(InputError):
        C.vote_at(a, y, ns=[5])
