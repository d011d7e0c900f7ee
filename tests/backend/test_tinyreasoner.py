"""The tiny reasoning LM's pieces: its tokenizer is lossless on every generated example and spells unknown words;
the model is a transformers causal LM whose cached greedy decoding equals recomputing from scratch; the training script
runs end to end and writes a file the loader reads back."""

from __future__ import annotations

import pytest

from backend.models import tinyreasoner as tr
from backend.reasoning import tasks


@pytest.fixture(scope="module")
def tok():
    return tr.TinyTokenizer(tr.base_vocab())


def test_tokenizer_round_trips_generated_examples(tok):
    for split in tasks.SPLITS:
        for p in tasks.generate(100, split, seed=5, steps=(1, 6)):
            text = tr.prompt_text(p.question) + " " + tasks.format_solution(p)
            ids = tok.encode(text)
            assert tok.decode(ids) == text
            assert tok.index["<unk>"] not in ids


def test_tokenizer_spells_unknown_words_and_marks_unknown_characters(tok):
    text = "Zorblax owns 12 quokkas."
    assert tok.decode(tok.encode(text)) == text
    assert tok.index["<unk>"] in tok.encode("caf\u00e9")
    assert tok.encode("1234")[:4] == [tok.index[c] for c in "1234"]


def test_vocabulary_holds_only_words_of_the_training_phrasings(tok):
    # a word of a held-out phrasing is spelled letter by letter, never a word token no training example contained
    import re

    trained = {w for p in tasks.generate(2000, "grammar", seed=3, steps=(1, 8)) for w in re.findall(r"[A-Za-z]{2,}", p.question)}
    held = {w for p in tasks.generate(400, "grammar_paraphrase", seed=3, steps=(1, 8))
            for w in re.findall(r"[A-Za-z]{2,}", p.question)} - trained
    assert held and not any(w in tok.index or " " + w in tok.index for w in held)


def test_prompt_pads_the_questions_numbers_like_the_reasoning_steps():
    assert tr.prompt_text(" Compute (86 + 7) * 2. ") == "Question: Compute (0086 + 0007) * 0002."
    assert tr.prompt_text("Add 123456 and 1.") == "Question: Add 123456 and 0001."


def test_word_noise_keeps_numbers_operators_and_the_answer():
    import random
    import re

    from backend.train.tinyreasoner import training_words, word_noise

    rng, words = random.Random(0), training_words()
    for p in tasks.generate(200, "grammar", seed=4, steps=(1, 8)):
        noisy = word_noise(p.question, rng, words, p_replace=0.3, p_spell=0.3, p_drop=0.2)
        assert re.findall(r"[\d()+*/=-]", noisy) == re.findall(r"[\d()+*/=-]", p.question)


def test_cached_greedy_decoding_equals_full_recompute(tok):
    import torch

    torch.manual_seed(0)
    model, tok2 = tr.build(tr.TinyReasonerConfig(n_layer=2, hidden=64, n_head=2, intermediate=128), tok.vocab)
    model.eval()
    r = tr.TinyReasoner(model, tok2, tr.TinyReasonerConfig(n_layer=2, hidden=64, n_head=2, intermediate=128), {})
    out = r.generate("Compute 3 + 4.", max_new_tokens=12)
    ids = torch.tensor([tok2.encode(tr.prompt_text("Compute 3 + 4."), bos=True)])
    with torch.inference_mode():
        for _ in range(12):
            nxt = int(model(input_ids=ids).logits[0, -1].argmax())
            if nxt == tok2.eos_token_id:
                break
            ids = torch.cat([ids, torch.tensor([[nxt]])], dim=1)
    prompt_len = len(tok2.encode(tr.prompt_text("Compute 3 + 4."), bos=True))
    assert out == tok2.decode(ids[0, prompt_len:].tolist(), skip_special=True)


def test_training_script_writes_a_loadable_file(tmp_path):
    from backend.train import tinyreasoner as train

    out = tmp_path / "tr.safetensors"
    assert train.main(["--steps", "2", "--tokens", "256", "--eval-n", "0", "--out", str(out)]) == 0
    r = tr.load_tinyreasoner(out)
    assert r.parameters > 1_000_000
    assert r.config.max_positions >= 400  # the longest grammar problems (8 operations) fit
    assert r.meta["quality"]["steps"] == 2
    assert isinstance(r.generate("Compute 1 + 2.", max_new_tokens=4), str)


def test_training_batches_hold_one_difficulty_within_the_token_budget(tok):
    from backend.train import tinyreasoner as train

    for step in (0, 3, 7):
        x, m = train.make_batch(tok, step, 2048, 512)
        assert x.shape[0] >= 4 and (x.shape[0] * x.shape[1] <= 2048 or x.shape[0] == 4)
        assert m.any(dim=1).all()  # every row has a target
        text = tok.decode(x[0].tolist(), skip_special=True)
        assert text.count(" = ") >= 1 + step % 8
