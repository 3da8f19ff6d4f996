"""``ragmeter run`` on real framework apps: a LangChain runnable built from langchain-core pieces
(fake chat model, in-memory vector store) and a LlamaIndex query engine (mock LLM and embedding)."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from click.testing import CliRunner

from ragmeter.cli import main

LANGCHAIN_APP = '''
from operator import itemgetter

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableParallel, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
store.add_documents([
    Document(page_content="Paris is the capital of France.", metadata={"source": "geo"}, id="fr"),
    Document(page_content="Water boils at 100 degrees.", metadata={"source": "sci"}, id="w"),
])
retriever = store.as_retriever(search_kwargs={"k": 2})
llm = FakeListChatModel(responses=["Paris is the capital of France."])
prompt = ChatPromptTemplate.from_template("Context: {contexts}\\nQuestion: {question}")
chain = RunnableParallel(contexts=itemgetter("question") | retriever, question=itemgetter("question")) \\
    | RunnablePassthrough.assign(answer=prompt | llm | StrOutputParser())
'''

LLAMAINDEX_APP = '''
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM

index = VectorStoreIndex.from_documents(
    [Document(text="Paris is the capital of France.", metadata={"source": "geo"}, id_="fr"),
     Document(text="Water boils at 100 degrees.", metadata={"source": "sci"}, id_="w")],
    embed_model=MockEmbedding(embed_dim=8))
engine = index.as_query_engine(llm=MockLLM(max_tokens=4), similarity_top_k=2)
'''


def _run(tmp_path, monkeypatch, module: str, source: str, spec: str) -> tuple[dict, list[dict]]:
    d = tmp_path / "mods"
    d.mkdir()
    (d / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    monkeypatch.syspath_prepend(str(d))
    sys.modules.pop(module, None)
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"id": "q1", "question": "What is the capital of France?",
                             "reference": "Paris is the capital of France."}) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["run", spec, "--questions", str(q), "-m", "token_f1", "-o", str(out),
                                    "--no-cache", "--no-report", "--slice", "source"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    outputs = [json.loads(x) for x in (out / "app_outputs.jsonl").read_text().splitlines()]
    return summary, outputs


def test_langchain_runnable(tmp_path, monkeypatch):
    pytest.importorskip("langchain_core")
    summary, outputs = _run(tmp_path, monkeypatch, "lc_app", LANGCHAIN_APP, "lc_app:chain")
    assert outputs[0]["answer"] == "Paris is the capital of France."
    assert sorted(c["id"] for c in outputs[0]["contexts"]) == ["fr", "w"]
    assert {c["metadata"]["source"] for c in outputs[0]["contexts"]} == {"geo", "sci"}
    assert summary["metrics"]["token_f1"]["mean"] == 1.0 and summary["run"]["app"]["errors"] == 0
    assert {s["value"] for s in summary["slices"]["source"]["slices"]} == {"geo", "sci"}


def test_llamaindex_query_engine(tmp_path, monkeypatch):
    pytest.importorskip("llama_index.core")
    summary, outputs = _run(tmp_path, monkeypatch, "li_app", LLAMAINDEX_APP, "li_app:engine")
    assert outputs[0]["answer"] == "text text text text"  # MockLLM's reply: max_tokens words
    assert sorted(c["text"] for c in outputs[0]["contexts"]) == ["Paris is the capital of France.",
                                                                 "Water boils at 100 degrees."]
    assert all("score" in c and c["metadata"]["source"] in ("geo", "sci") for c in outputs[0]["contexts"])
    assert summary["run"]["app"]["errors"] == 0 and summary["metrics"]["token_f1"]["n"] == 1
