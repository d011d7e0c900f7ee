"""Invariants of CatalystBench: the benchmark's rows and splits, the cached-state forward of the last layer (equal to
the Hugging Face forward, with and without the adapter), teacher-forced exact match equal to greedy decoding, the
routing of the heads, the regex extractor, the records decoder, the configs, and the shipped checkpoints re-evaluated
on the ci subset of test elements (equal to the predictions stored at training)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import torch

from backend.data.catalystbench import fit as F
from backend.data.catalystbench import inputs as I
from backend.data.catalystbench import jobs as J
from backend.data.catalystbench.baselines import regex_extract
from backend.data.catalystbench.bench import TASKS, build_bench, extraction_sentences
from backend.data.catalystbench.records import read_records
from backend.errors import InputError


@pytest.fixture(scope="module")
def bench():
    return build_bench()


@pytest.fixture(scope="module")
def lm():
    from backend.models.lm import load_causal_lm

    return load_causal_lm()


def test_benchmark_rows_and_element_splits(bench) -> None:  # noqa: ANN001
    assert len(bench.features) == 118
    counts = {t.name: len(bench.select(t.name)) for t in TASKS}
    assert counts["log_density"] == counts["covalent_radius"] == counts["series"] == counts["goldschmidt"] == 118
    assert counts["electronegativity"] == 85
    assert counts["melting_extract"] % 2 == 0 and counts["melting_extract"] >= 180
    test_el = {r.element for r in bench.rows if r.split == "test"}
    train_el = {r.element for r in bench.rows if r.split == "train"}
    assert not test_el & train_el and len(test_el) == 35
    for r in bench.rows:
        kind = next(t.kind for t in bench.tasks if t.name == r.task)
        assert r.prompt.startswith(f"[{kind}:{r.task}]")
        if kind in ("regression", "extraction"):
            assert math.isclose(float(r.answer), r.target, abs_tol=0.0051 if kind == "regression" else 0.5) or \
                r.task == "covalent_radius" and abs(float(r.answer) - r.target) <= 0.5
        else:
            assert r.answer.strip() == next(t for t in bench.tasks if t.name == r.task).classes[r.label]


def test_extraction_sentences_state_the_melting_point_among_distractors(bench) -> None:  # noqa: ANN001
    from backend.data.catalystbench.bench import element_records

    fe = next(r for r in element_records() if r["symbol"] == "Fe")
    for s in extraction_sentences(fe):
        assert "1811" in s and len([w for w in s.split() if any(ch.isdigit() for ch in w)]) >= 2
    assert regex_extract("Iron melts at 1811 K and has a density of 7.87 g/cm3.") == "1811"
    assert regex_extract("The density of iron is 7.87 g/cm3 and its melting point is 1811 kelvin.") == "1811"
    assert regex_extract("At 1811 K solid iron turns liquid; it boils at 3134 K.") is None


def test_last_layer_on_cached_states_equals_the_full_forward(lm, bench) -> None:  # noqa: ANN001
    top = F.TopLayer(lm.model)
    enc = F.encode(lm.tokenizer, bench.rows[:3])
    states = F.cache_states(lm.model, enc.ids)
    ad = top.new_adapter(4, 8.0, 0)
    torch.nn.init.normal_(ad.qB, std=0.05)
    torch.nn.init.normal_(ad.vB, std=0.05)
    for i in range(3):
        ids = torch.tensor([enc.ids[i]])
        T = ids.shape[1]
        pos = torch.tensor([[enc.prompt_len[i] - 1, T - 2]])
        with torch.no_grad():
            for adapter in (None, ad):
                with top.adapted(adapter):
                    ref = lm.model(input_ids=ids).logits[0, pos[0]]
                got = top.logits(top.forward(states[i].unsqueeze(0), torch.ones(1, T), pos, adapter))[0]
                assert torch.allclose(got, ref, atol=2e-3), float((got - ref).abs().max())


def test_padded_batch_equals_single_rows(lm, bench) -> None:  # noqa: ANN001
    top = F.TopLayer(lm.model)
    rows = bench.rows[:4]
    enc = F.encode(lm.tokenizer, rows)
    enc.states = F.cache_states(lm.model, enc.ids)
    single = [F.cache_states(lm.model, [ids])[0] for ids in enc.ids[:2]]
    for a, b in zip(single, enc.states[:2], strict=True):
        assert torch.allclose(a, b, atol=1e-3)
    H, M, pos, _ = F._batch(enc, [0, 1, 2, 3], [True] * 4)
    with torch.no_grad():
        batched = top.forward(H, M, pos)
        for j in range(4):
            H1, M1, p1, _ = F._batch(enc, [j], [True])
            one = top.forward(H1, M1, p1)
            n = p1.shape[1]
            assert torch.allclose(batched[j, :n], one[0], atol=1e-3)


def test_teacher_forced_exact_match_equals_greedy_decoding(lm, bench) -> None:  # noqa: ANN001
    """With an untrained adapter the base model's greedy answer is wrong; the teacher-forced check must agree with
    decoding, and it must accept the greedy continuation itself as an answer."""
    top = F.TopLayer(lm.model)
    row = bench.select("series", "test")[0]
    p = lm.tokenizer(row.prompt, add_special_tokens=False)["input_ids"]
    out = F.generate(top, lm.tokenizer, [p], None, 4)[0]
    gen = lm.tokenizer(" " + out, add_special_tokens=False)["input_ids"][:3]
    full = p + gen
    states = F.cache_states(lm.model, [full])
    with torch.no_grad():
        pos = torch.tensor([list(range(len(p) - 1, len(full) - 1))])
        arg = top.logits(top.forward(states[0].unsqueeze(0), torch.ones(1, len(full)), pos))[0].argmax(-1)
    assert arg.tolist() == gen
    assert F.score(bench, [{"row": bench.rows.index(row), "task": "series", "pred": out,
                            "correct": out == row.answer.strip(), "parsed": True}])["series"] in (0.0, 1.0)


def test_routing_sends_each_task_to_its_head(lm, bench) -> None:  # noqa: ANN001
    top = F.TopLayer(lm.model)
    mft = J.METHODS.get("mft")
    st = J.METHODS.get("st")
    assert mft.shared_adapter and mft.heads and not st.shared_adapter and not st.heads
    units = J.load_method(top, bench, "mft", 0)
    assert len({id(u) for u in units.values()}) == 1
    u = units["series"]
    assert set(u.heads) == {t.name for t in bench.tasks if t.kind != "extraction"}
    assert u.heads["series"].net[-1].out_features == 10 and u.heads["electronegativity"].net[-1].out_features == 1
    units_st = J.load_method(top, bench, "st", 0)
    assert len({id(u) for u in units_st.values()}) == len(bench.tasks) and not any(u.heads for u in units_st.values())


@pytest.mark.parametrize("method", J.METHOD_NAMES)
def test_shipped_checkpoints_reproduce_their_stored_predictions(method, lm, bench) -> None:  # noqa: ANN001
    """Seed 0 of every method on the ci subset (the first test elements): the same predictions as stored at training."""
    quality, extra = J.recorded(method)
    test_rows = extra["test_rows"]
    stored = dict(zip(test_rows, extra["predictions"]["seed0"], strict=True))
    rows = J._subset_rows(bench, J.CI_ELEMENTS)
    top = F.TopLayer(lm.model)
    enc_sub = F.encode_and_cache(lm.model, lm.tokenizer, [bench.rows[i] for i in rows], disk=False)
    enc = F.Encoded([[]] * len(bench.rows), [0] * len(bench.rows), [None] * len(bench.rows))
    for k, i in enumerate(rows):
        enc.ids[i], enc.prompt_len[i], enc.states[i] = enc_sub.ids[k], enc_sub.prompt_len[k], enc_sub.states[k]
    units = J.load_method(top, bench, method, 0)
    preds = F.predict(top, lm.tokenizer, bench, enc, units, rows, F.FitSettings(**J._settings(method)))
    for p in preds:
        want = stored[p["row"]]
        if isinstance(want, str):
            assert p["pred"] == want
        else:
            assert abs(float(p["pred"]) - want) <= 1e-2 * max(1.0, abs(want)), (p, want)


def test_records_decoder_reads_the_example_and_the_odd_files() -> None:
    recs = read_records(I.element_records())
    assert [r["symbol"] for r in recs] == ["Fe", "Se", "Ex"] and recs[0]["z"] == 26 and recs[0]["group"] == 8
    for name, data in I.element_records_odd().items():
        got = read_records(data, name=name)
        assert got and all(r["block"] in "spdf" for r in got), name
    assert read_records(I.element_records_odd()["semicolon.csv"])[0]["weight"] == pytest.approx(55.845)


@pytest.mark.parametrize("data, words", [
    (b"", "empty"),
    (b"name,symbol\nIron,Fe\n", "lacks the column"),
    (I.HEADER.encode() + b"1,Iron,Fe,,4,8,d,55.8\n", "atomic_number cell is empty"),
    (I.HEADER.encode() + b"1,Iron,Fe,26,4,8,x,55.8\n", "block must be"),
    (I.HEADER.encode() + b"1,Iron,Fe,26,4,8,d,abc\n", "must be a number"),
    (I.HEADER.encode() + b"".join(b"%d,E,E,1,1,1,s,1.0\n" % i for i in range(11)), "more than 10"),
    (b"PK\x03\x04rest", "compressed"),
])
def test_records_decoder_refuses_bad_files(data, words) -> None:  # noqa: ANN001
    with pytest.raises(InputError, match=words):
        read_records(data)


def test_configs_check_themselves_and_pickle() -> None:
    with pytest.raises(InputError):
        J.BenchmarkConfig(methods=("nope",))
    with pytest.raises(InputError):
        J.BenchmarkConfig(seeds=(7,))
    with pytest.raises(InputError):
        J.BenchmarkConfig(source="other")
    with pytest.raises(InputError):
        J.PredictConfig()
    with pytest.raises(InputError):
        J.PredictConfig(sentences=("x" * 500,))
    for obj in (J.run_benchmark, J.run_predict, J.BenchmarkConfig(), J.PredictConfig(sentences=("a",))):
        assert pickle.loads(pickle.dumps(obj)) == obj


def test_r2_and_scores() -> None:
    y = np.array([1.0, 2.0, 3.0])
    assert F.r2(y, y) == 1.0 and F.r2(y, np.full(3, 2.0)) == 0.0
