"""faithfulness_nli with a tiny, randomly initialised BERT NLI model built and saved in the test.

No NLI model can be downloaded here, so the model's *judgements* are meaningless; what is tested
is the loading path, the windowing, the arithmetic and the edge cases. Expected probabilities are
computed independently (tokenise + forward + softmax in the test); known probabilities are forced
by zeroing the classifier weights and setting its bias, so that P(entailment) = softmax(bias)[0].
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from ragmeter import MissingBackendError, Sample, evaluate, get_evaluator  # noqa: E402
from ragmeter.errors import InvalidParameterError  # noqa: E402
from ragmeter.metrics.generation import faithfulness_nli as nli  # noqa: E402
from ragmeter.registry import canonical_name, default_metric_names, get_spec  # noqa: E402

from .rules import judge_rule  # noqa: E402

WORDS = ("paris is the capital of france cheese made from milk europe in a an has ten million cats "
         "it london city river seine flows through rome italy").split()
MAX_LEN = 48
LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}
CTX = ["Paris is the capital of France.", "Cheese is made from milk.", "The Seine flows through Paris."]
ANSWER = "Paris is the capital of France. Cheese is made from milk. Europe has ten million cats."


def build_model(path: Path, *, id2label: dict[int, str] = LABELS, bias: list[float] | None = None,
                seed: int = 0) -> tuple[object, object]:
    """Save a tiny BERT sequence classifier and a WordPiece tokenizer under ``path``; return both."""
    path.mkdir(parents=True, exist_ok=True)
    vocab = path / "vocab-src.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", *WORDS]) + "\n")
    tok = transformers.BertTokenizerFast(vocab=str(vocab), model_max_length=MAX_LEN)
    torch.manual_seed(seed)
    cfg = transformers.BertConfig(
        vocab_size=7 + len(WORDS), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=37, max_position_embeddings=64, num_labels=len(id2label), id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    model = transformers.BertForSequenceClassification(cfg).eval()
    if bias is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.copy_(torch.tensor(bias))
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return model, tok


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("nli") / "tiny-bert-nli"
    model, tok = build_model(path)
    return path, model, tok


def name(path: Path, **params: object) -> str:
    extra = "".join(f",{k}={v!r}" for k, v in params.items())
    return f"faithfulness_nli(model={str(path)!r}{extra})"


def sample(answer: str | None = ANSWER, contexts: list | None = None, id: str = "x") -> Sample:
    return Sample.model_validate({"id": id, "query": "What is the capital of France?", "answer": answer,
                                  "contexts": CTX if contexts is None else contexts})


def reference_prob(model, tok, premise: str, claim: str) -> float:
    """P(entailment) computed here: tokenise the pair, one forward pass, softmax."""
    enc = tok(premise, claim, return_tensors="pt")
    assert enc["input_ids"].shape[1] <= MAX_LEN, "the reference computation expects one window"
    with torch.no_grad():
        return float(torch.softmax(model(**enc).logits, dim=-1)[0, 0])


def p_entail(bias: list[float]) -> float:
    return math.exp(bias[0]) / sum(math.exp(b) for b in bias)


# ---- loading, inference and arithmetic -----------------------------------------------------------

def test_probabilities_equal_an_independent_computation(tiny):
    path, model, tok = tiny
    r = get_evaluator(name(path)).evaluate(sample())
    claims = ["Paris is the capital of France.", "Cheese is made from milk.", "Europe has ten million cats."]
    premise = "\n\n".join(CTX)
    expected = [reference_prob(model, tok, premise, c) for c in claims]
    assert [c["claim"] for c in r.details["claims"]] == claims
    assert [c["entailment"] for c in r.details["claims"]] == pytest.approx(expected, abs=1e-5)
    assert all(c["windows"] == 1 for c in r.details["claims"])
    assert r.score == sum(p >= 0.5 for p in expected) / 3
    assert [c["supported"] for c in r.details["claims"]] == [p >= 0.5 for p in expected]
    assert r.details["claims_from"] == "sentences" and r.details["threshold"] == 0.5


def test_threshold_parameter_sets_the_count(tiny):
    path, model, tok = tiny
    premise = "\n\n".join(CTX)
    probs = sorted(reference_prob(model, tok, premise, c["claim"])
                   for c in get_evaluator(name(path)).evaluate(sample()).details["claims"])
    assert probs[0] < probs[1] < probs[2]
    # thresholds halfway between consecutive probabilities: 3, 2, 1, 0 claims pass
    cuts = [probs[0] / 2, (probs[0] + probs[1]) / 2, (probs[1] + probs[2]) / 2, (probs[2] + 1) / 2]
    scores = [get_evaluator(name(path, threshold=t)).evaluate(sample()).score for t in cuts]
    assert scores == pytest.approx([1.0, 2 / 3, 1 / 3, 0.0])
    none = get_evaluator(name(path, threshold=cuts[3])).evaluate(sample())
    assert none.score == 0.0 and not any(c["supported"] for c in none.details["claims"])


def test_batch_equals_one_at_a_time_and_the_runner_uses_it(tiny):
    path, _, _ = tiny
    samples = [sample(id="a"), sample("Rome is in Italy. The Seine flows through Paris.", id="b"),
               sample("London is a city.", contexts=["London is a city on a river."], id="c")]
    ev = get_evaluator(name(path))
    batch = ev.evaluate_batch(samples, None)
    for s, b in zip(samples, batch, strict=True):
        one = ev.evaluate(s)
        assert b.score == pytest.approx(one.score)
        assert [c["entailment"] for c in b.details["claims"]] == pytest.approx(
            [c["entailment"] for c in one.details["claims"]], abs=1e-5)
    run = evaluate(samples, [name(path)])
    assert [r["metrics"][canonical_name(name(path))]["score"] for r in run.records] == pytest.approx(
        [b.score for b in batch])


def test_model_is_loaded_once_per_path(tiny, monkeypatch):
    path, _, _ = tiny
    loads: list[str] = []
    real = nli.NLIModel

    def counting(source: str) -> nli.NLIModel:
        loads.append(source)
        return real(source)

    monkeypatch.setattr(nli, "NLIModel", counting)
    monkeypatch.setattr(nli, "_MODELS", {})
    a = get_evaluator(name(path))
    b = get_evaluator(name(path, threshold=0.9))
    assert loads == []  # building the evaluators loads nothing
    for ev in (a, b, a):
        ev.evaluate(sample())
    b.evaluate_batch([sample(id="1"), sample(id="2")], None)
    assert loads == [str(path.resolve())]
    assert a.nli is b.nli


def test_long_premise_is_windowed_and_the_max_is_taken(tiny):
    path, model, tok = tiny
    premise_sentences = [f"{w} is the capital of france ." for w in WORDS]  # far beyond MAX_LEN tokens
    contexts = [" ".join(premise_sentences[:10]), " ".join(premise_sentences[10:])]
    claim = "Rome is in Italy."
    r = get_evaluator(name(path)).evaluate(sample(claim, contexts))
    # the rule, computed here by hand: windows of `budget` premise tokens, consecutive ones sharing `stride`
    premise = "\n\n".join(contexts)
    p_ids = tok(premise, add_special_tokens=False)["input_ids"]
    h_ids = tok(claim, add_special_tokens=False)["input_ids"]
    budget = MAX_LEN - 3 - len(h_ids)
    stride = min(nli.WINDOW_OVERLAP, budget // 2 - 1)
    windows, start = [], 0
    while True:
        windows.append(p_ids[start:start + budget])
        if start + budget >= len(p_ids):
            break
        start += budget - stride
    probs = []
    with torch.no_grad():
        for w in windows:
            ids = [tok.cls_token_id, *w, tok.sep_token_id, *h_ids, tok.sep_token_id]
            types = [0] * (len(w) + 2) + [1] * (len(h_ids) + 1)
            logits = model(input_ids=torch.tensor([ids]), token_type_ids=torch.tensor([types])).logits
            probs.append(float(torch.softmax(logits, dim=-1)[0, 0]))
    assert len(windows) > 2
    detail = r.details["claims"][0]
    assert detail["windows"] == len(windows)
    assert detail["entailment"] == pytest.approx(max(probs), abs=1e-5)


def test_overlong_claim_is_cut_and_flagged(tiny):
    path, _, _ = tiny
    long_claim = " ".join(WORDS) + "."  # one sentence longer than half of MAX_LEN
    r = get_evaluator(name(path)).evaluate(sample(long_claim))
    assert r.details["claims"][0]["truncated"] is True
    assert 0.0 <= r.details["claims"][0]["entailment"] <= 1.0


# ---- forced probabilities: verdicts and edge cases --------------------------------------------------

@pytest.mark.parametrize("bias, expected", [([30.0, 0.0, 0.0], 1.0), ([-30.0, 0.0, 0.0], 0.0)])
def test_forced_probabilities_give_the_verdicts(tmp_path, bias, expected):
    build_model(tmp_path / "m", bias=bias)
    r = get_evaluator(name(tmp_path / "m")).evaluate(sample())
    assert r.score == expected
    assert [c["entailment"] for c in r.details["claims"]] == pytest.approx([p_entail(bias)] * 3, abs=1e-9)
    assert all(c["supported"] is (expected == 1.0) for c in r.details["claims"])


def test_threshold_is_inclusive_and_respected(tmp_path):
    bias = [math.log(3.0), 0.0, 0.0]  # P(entailment) = 3 / (3 + 1 + 1) = 0.6
    build_model(tmp_path / "m", bias=bias)
    assert p_entail(bias) == pytest.approx(0.6)
    assert get_evaluator(name(tmp_path / "m")).evaluate(sample()).score == 1.0
    assert get_evaluator(name(tmp_path / "m", threshold=0.59)).evaluate(sample()).score == 1.0
    assert get_evaluator(name(tmp_path / "m", threshold=0.61)).evaluate(sample()).score == 0.0


def test_edge_cases_load_no_model(tmp_path):
    # weights missing: any sample that reaches the model records an error; the edge cases never do
    build_model(tmp_path / "m", bias=[30.0, 0.0, 0.0])
    (tmp_path / "m" / "model.safetensors").unlink()
    ev = get_evaluator(name(tmp_path / "m"))
    cases = [sample("", id="empty"), sample(None, id="none"), sample("   ", id="blank"),
             sample("Paris.", contexts=[], id="noctx"), sample("Paris.", contexts=[{"id": "d1"}], id="idsonly"),
             sample("It is. It is not!", id="noclaim"), sample(ANSWER, id="needs-model")]
    got = ev.evaluate_batch(cases, None)
    assert [r.score for r in got[:6]] == [1.0, 1.0, 1.0, 0.0, 0.0, 1.0]
    assert got[5].details["claims"] == [] and got[5].reason == "the answer states no claim"
    assert got[6].score is None and got[6].error is not None
    assert got[6].error.type == "MissingBackendError"
    run = evaluate(cases, [name(tmp_path / "m")])
    assert run.summary()[canonical_name(name(tmp_path / "m"))]["errors"] == 1


# ---- configuration errors, raised when the metric is built ---------------------------------------

def test_missing_label_mapping_is_a_clear_error(tmp_path):
    build_model(tmp_path / "m", id2label={0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(InvalidParameterError, match=r"no entailment label.*LABEL_0"):
        get_evaluator(name(tmp_path / "m"))


def test_entailment_label_lookup():
    assert nli.entailment_index({"0": "CONTRADICTION", "1": "NEUTRAL", "2": "ENTAILMENT"}) == 2
    assert nli.entailment_index({0: "entailment", 1: "not_entailment"}) == 0
    assert nli.entailment_index({0: "Non-Entailment", 1: "Entails"}) == 1
    with pytest.raises(InvalidParameterError, match="more than one"):
        nli.entailment_index({0: "entailment", 1: "entailed"})
    with pytest.raises(InvalidParameterError, match="no entailment label"):
        nli.entailment_index({})


def test_missing_model_path_fails_at_construction(tmp_path):
    with pytest.raises(MissingBackendError, match="does not exist"):
        get_evaluator(name(tmp_path / "no-such-model"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingBackendError, match=r"no config\.json"):
        get_evaluator(name(tmp_path / "empty"))
    with pytest.raises(MissingBackendError, match="never downloads"):
        get_evaluator("faithfulness_nli(model='ragmeter-tests/no-such-nli-model')")


def test_model_from_env_var_and_parameter_wins(tiny, tmp_path, monkeypatch):
    path, _, _ = tiny
    monkeypatch.delenv(nli.MODEL_ENV, raising=False)
    with pytest.raises(MissingBackendError, match=nli.MODEL_ENV):
        get_evaluator("faithfulness_nli")
    monkeypatch.setenv(nli.MODEL_ENV, str(path))
    ev = get_evaluator("faithfulness_nli")
    assert ev.name == "faithfulness_nli" and ev.source == str(path.resolve())
    assert ev.evaluate(sample()).details["model"] == str(path.resolve())
    monkeypatch.setenv(nli.MODEL_ENV, str(tmp_path / "missing"))
    assert get_evaluator(name(path)).source == str(path.resolve())


def test_missing_torch_or_transformers_raises_with_the_install_command(tiny, monkeypatch):
    path, _, _ = tiny
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(MissingBackendError, match=r"transformers.*pip install torch==2\.13\.0 && "
                                                  r"pip install -e \"\.\[st\]\" \(in the ragmeter clone\)"):
        get_evaluator(name(path))


@pytest.mark.parametrize("threshold", [0, 1.5])
def test_threshold_out_of_range(tiny, threshold):
    with pytest.raises(InvalidParameterError, match="threshold"):
        get_evaluator(name(tiny[0], threshold=threshold))


def test_registry_entry():
    spec = get_spec("faithfulness_nli")
    assert spec.category == "generation" and spec.requires == ("answer", "contexts")
    assert not spec.needs_judge and not spec.needs_embedder and spec.default_names == ()
    assert "DeBERTa-v3" in spec.summary
    assert not any(n.startswith("faithfulness_nli") for n in default_metric_names({"query", "answer", "contexts"}))


# ---- claims from the judge -----------------------------------------------------------------------

@pytest.fixture
def judge(fake_llm, make_judge):
    fake_llm.rule = judge_rule
    return make_judge()


def test_judge_claims_are_shared_with_faithfulness(tiny, judge, fake_llm):
    path, model, tok = tiny
    smp = sample("Paris is the capital of France. Paris has ten million cats.")
    metric = canonical_name(name(path))
    run = evaluate([smp], ["faithfulness", metric], judge=judge)
    rec = run.records[0]["metrics"]
    assert len(fake_llm.log) == 2  # analyse + verify for faithfulness; the NLI metric adds no call
    claims = [c["claim"] for c in rec["faithfulness"]["details"]["claims"]]
    assert [c["claim"] for c in rec[metric]["details"]["claims"]] == claims
    assert rec[metric]["details"]["claims_from"] == "judge"
    premise = "\n\n".join(CTX)
    assert [c["entailment"] for c in rec[metric]["details"]["claims"]] == pytest.approx(
        [reference_prob(model, tok, premise, c) for c in claims], abs=1e-5)


def test_claims_parameter(tiny, judge, fake_llm):
    path, _, _ = tiny
    r = get_evaluator(name(path, claims="sentences"), judge=judge).evaluate(sample())
    assert r.details["claims_from"] == "sentences" and len(fake_llm.log) == 0
    with pytest.raises(MissingBackendError, match="judge"):
        get_evaluator(name(path, claims="judge"))

