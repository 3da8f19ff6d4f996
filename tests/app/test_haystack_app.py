"""``ragmeter run`` on a real Haystack pipeline: an in-memory document store, its BM25 retriever, a
prompt builder and a generator component that answers from its prompt (no network)."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from click.testing import CliRunner

from ragmeter.app.haystack_app import pipeline_inputs
from ragmeter.cli import main
from ragmeter.errors import AppError

HAYSTACK_APP = '''
from haystack import Document, Pipeline, component
from haystack.components.builders import PromptBuilder
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

store = InMemoryDocumentStore()
store.write_documents([Document(id="fr", content="Paris is the capital of France.", meta={"source": "geo"}),
                       Document(id="ly", content="Lyon is a city in France.", meta={"source": "geo"}),
                       Document(id="w", content="Water boils at 100 degrees.", meta={"source": "sci"})])


@component
class EchoGenerator:
    """Answers with the first line of its prompt (the top document)."""

    @component.output_types(replies=list[str])
    def run(self, prompt: str):
        return {"replies": [prompt.splitlines()[0]]}


pipeline = Pipeline()
pipeline.add_component("retriever", InMemoryBM25Retriever(store))
template = "{% for d in documents %}{{ d.content }}\\n{% endfor %}Q: {{ question }}"
pipeline.add_component("prompt", PromptBuilder(template, required_variables=["question", "documents"]))
pipeline.add_component("llm", EchoGenerator())
pipeline.connect("retriever.documents", "prompt.documents")
pipeline.connect("prompt.prompt", "llm.prompt")
'''


def test_haystack_pipeline_with_a_param(tmp_path, monkeypatch):
    pytest.importorskip("haystack")
    d = tmp_path / "mods"
    d.mkdir()
    (d / "hs_app.py").write_text(textwrap.dedent(HAYSTACK_APP), encoding="utf-8")
    monkeypatch.syspath_prepend(str(d))
    sys.modules.pop("hs_app", None)
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"id": "q1", "question": "What is the capital of France?",
                             "reference": "Paris is the capital of France."}) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["run", "hs_app:pipeline", "--questions", str(q), "-m", "token_f1", "-o",
                                    str(out), "--no-cache", "--no-report", "--param", "top_k=1,2"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    for k in (1, 2):
        run = out / f"top_k={k}"
        (output,) = [json.loads(x) for x in (run / "app_outputs.jsonl").read_text().splitlines()]
        assert output["answer"] == "Paris is the capital of France."  # the echo of the top document
        assert [c["id"] for c in output["contexts"]] == ["fr", "ly"][:k]  # top_k reached the retriever
        assert output["contexts"][0]["text"] == "Paris is the capital of France."
        assert output["contexts"][0]["metadata"]["source"] == "geo" and output["contexts"][0]["score"] > 0
        summary = json.loads((run / "summary.json").read_text())
        assert summary["metrics"]["token_f1"]["mean"] == 1.0 and summary["run"]["app"]["errors"] == 0


def test_pipeline_inputs_name_what_is_missing():
    inputs = {"retriever": {"query": {}, "top_k": {}}, "prompt": {"question": {}}}
    assert pipeline_inputs(inputs, "q?", {"top_k": 3}) == {"retriever": {"query": "q?", "top_k": 3},
                                                           "prompt": {"question": "q?"}}
    with pytest.raises(AppError, match=r"--param temperature: .*retriever\.query, retriever\.top_k"):
        pipeline_inputs(inputs, "q?", {"temperature": 0})
    with pytest.raises(AppError, match="no input named query or question"):
        pipeline_inputs({"llm": {"prompt": {}}}, "q?", {})
