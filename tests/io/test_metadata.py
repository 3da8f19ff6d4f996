"""Contexts and rows as retrievers and frameworks hand them out: every key ragmeter does not read
is kept as metadata (never an error), written beside the results, and the scores do not change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter import evaluate
from ragmeter.cli import main
from ragmeter.errors import InputError
from ragmeter.io import read_samples, write_samples
from ragmeter.io.adapters import as_samples
from ragmeter.types import MAX_STORED_CHARS, Context, Sample

VALIDATION = Path(__file__).parents[2] / "src" / "ragmeter" / "data" / "validation" / "judge_validation.jsonl"


def test_extra_context_keys_are_its_metadata():
    c = Context.model_validate({"id": "d1", "text": "t", "score": 0.5, "source": "a.pdf", "page": 3,
                                "metadata": {"title": "A", "source": "b.pdf"}})
    # the metadata mapping's keys and the context's own keys, side by side (a key given both ways:
    # the context's own)
    assert c.metadata == {"title": "A", "source": "a.pdf", "page": 3}
    assert (c.id, c.text, c.score) == ("d1", "t", 0.5)


def test_the_fields_ragmeter_reads_stay_validated():
    rows = [{"query": "q", "contexts": [{"text": "t", "score": "high", "source": "s"}]}]
    with pytest.raises(InputError) as info:
        list(as_samples(rows))
    assert info.value.field == "contexts[0].score"
    with pytest.raises(InputError) as info:
        list(as_samples([{"query": "q", "contexts": [{"source": "s"}]}]))
    assert "needs an 'id' or a 'text'" in info.value.message and "'source'" in info.value.message


def test_unknown_row_keys_are_row_metadata():
    s = next(as_samples([{"query": "q", "answer": "a", "category": "geo", "metadata": {"lang": "en"}}]))
    assert s.metadata == {"lang": "en", "category": "geo"}


def test_results_jsonl_holds_the_metadata_bounded(tmp_path):
    rows = [
        {"id": "a", "contexts": [{"id": "x", "source": "wiki"}, {"id": "y"}], "relevant": ["x"],
         "category": "geo", "note": "n" * (MAX_STORED_CHARS + 10)},
        {"id": "b", "contexts": [{"id": "x"}], "relevant": ["x"], "category": None},
    ]
    evaluate(rows, ["mrr"], out_dir=str(tmp_path))
    lines = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert lines[0]["metadata"]["category"] == "geo"
    assert lines[0]["metadata"]["note"].startswith("n" * MAX_STORED_CHARS + "... [10 more")  # cut, and said so
    kept = f"{MAX_STORED_CHARS:,} of {MAX_STORED_CHARS + 10:,} characters kept"
    assert lines[0]["truncated"] == [f"metadata.note: {kept}"]
    assert lines[0]["context_metadata"] == [{"source": "wiki"}, {}]
    assert "metadata" not in lines[1] and "context_metadata" not in lines[1]  # a null value is absent
    assert lines[0]["metrics"]["mrr"]["score"] == 1.0


def test_written_samples_keep_context_metadata(tmp_path):
    s = Sample.from_record({"id": "1", "query": "q", "contexts": [{"text": "t", "source": "s"}, "u"]})
    for name in ("o.jsonl", "o.parquet"):
        write_samples([s], tmp_path / name)
        back = next(read_samples(tmp_path / name))
        assert back.contexts == s.contexts, name


def test_validation_file_with_extra_keys_scores_the_same(tmp_path):
    rows = [json.loads(x) for x in VALIDATION.read_text(encoding="utf-8").splitlines() if x.strip()]
    assert len(rows) == 72
    dressed = []
    for i, r in enumerate(rows):
        r2 = dict(r)
        r2["category"] = ["a", "b", "c"][i % 3]
        r2["contexts"] = [dict({"text": c} if isinstance(c, str) else c, source=f"src{j % 2}", title=f"T{j}",
                               metadata={"page": j}) for j, c in enumerate(r["contexts"])]
        dressed.append(r2)
    plain_path, dressed_path = tmp_path / "plain.jsonl", tmp_path / "dressed.jsonl"
    plain_path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dressed_path.write_text("".join(json.dumps(r) + "\n" for r in dressed), encoding="utf-8")
    metrics = ["rouge_l", "token_f1", "fact_consistency", "lexical_faithfulness", "mrr", "hit_rate"]
    a = evaluate(str(plain_path), metrics, out_dir=str(tmp_path / "a"))
    b = evaluate(str(dressed_path), metrics, out_dir=str(tmp_path / "b"))
    assert a.ids == b.ids
    assert a.summary() == b.summary()
    la = [json.loads(x) for x in (tmp_path / "a" / "results.jsonl").read_text().splitlines()]
    lb = [json.loads(x) for x in (tmp_path / "b" / "results.jsonl").read_text().splitlines()]
    assert [x["metrics"] for x in la] == [x["metrics"] for x in lb]
    assert lb[4]["metadata"]["category"] == "b"
    assert lb[4]["context_metadata"][1] == {"page": 1, "source": "src1", "title": "T1"}
    # the same through `ragmeter eval` (its engine choice, the CLI's summary)
    for name, path in (("ca", plain_path), ("cb", dressed_path)):
        res = CliRunner().invoke(main, ["eval", str(path), *[a for m in metrics for a in ("-m", m)], "-o",
                                        str(tmp_path / name), "--no-report", "-q"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
    sa, sb = (json.loads((tmp_path / n / "summary.json").read_text())["metrics"] for n in ("ca", "cb"))
    assert sa == sb and sa == json.loads((tmp_path / "a" / "summary.json").read_text())["metrics"]


# ---- framework objects, tested against the real packages ------------------------------------------


def test_langchain_documents_are_contexts():
    documents = pytest.importorskip("langchain_core.documents")
    docs = [documents.Document(page_content="Paris is the capital.", metadata={"source": "fr.txt"}, id="d1"),
            documents.Document(page_content="Rome.", metadata={"source": "it.txt"})]
    s = next(as_samples([{"query": "q", "contexts": docs, "relevant": ["d1"]}]))
    assert [(c.id, c.text, c.metadata) for c in s.contexts] == [
        ("d1", "Paris is the capital.", {"source": "fr.txt"}), (None, "Rome.", {"source": "it.txt"})]
    # a document as its dict() / model_dump() (what a JSON export of LangChain output holds)
    s2 = next(as_samples([{"query": "q", "contexts": [docs[0].model_dump()]}]))
    assert (s2.contexts[0].id, s2.contexts[0].text, s2.contexts[0].metadata["source"]) == (
        "d1", "Paris is the capital.", "fr.txt")


def test_llamaindex_nodes_are_contexts():
    schema = pytest.importorskip("llama_index.core.schema")
    node = schema.TextNode(text="Paris is the capital.", id_="n1", metadata={"file_name": "fr.txt"})
    scored = schema.NodeWithScore(node=node, score=0.75)
    s = next(as_samples([{"query": "q", "contexts": [scored, node]}]))
    assert [(c.id, c.text, c.score, c.metadata) for c in s.contexts] == [
        ("n1", "Paris is the capital.", 0.75, {"file_name": "fr.txt"}),
        ("n1", "Paris is the capital.", None, {"file_name": "fr.txt"})]


def test_haystack_documents_are_contexts():
    haystack = pytest.importorskip("haystack")
    doc = haystack.Document(id="h1", content="Paris is the capital.", meta={"source": "fr.txt"}, score=0.5)
    s = next(as_samples([{"query": "q", "contexts": [doc, doc.to_dict()]}]))
    for c in s.contexts:
        assert (c.id, c.text, c.score, c.metadata["source"]) == ("h1", "Paris is the capital.", 0.5, "fr.txt")
