"""OpenTelemetry traces as input (``format="otel"``): spans made by the real SDK, written by its
``ConsoleSpanExporter`` or encoded as OTLP/JSON, read back into one sample per trace."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk.trace")

from click.testing import CliRunner
from google.protobuf.json_format import MessageToJson
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ragmeter.cli import main
from ragmeter.errors import InputError
from ragmeter.io import read_samples
from ragmeter.io.readers import input_format
from ragmeter.types import Sample

PARIS = "Paris is the capital of France."
BERLIN = "Berlin is in Germany."
HAMLET = "Hamlet was written by Shakespeare."


def record_rag(provider: TracerProvider, *, broken: bool = False) -> None:
    """Three traces of a tiny RAG app: OpenInference attributes, GenAI attributes, and one whose
    retrieval is missing (``broken``: also one without an answer)."""
    tracer = provider.get_tracer("rag-app")
    with tracer.start_as_current_span("rag") as root:
        root.set_attribute("openinference.span.kind", "CHAIN")
        root.set_attribute("input.value", "What is the capital of France?")
        with tracer.start_as_current_span("retrieve") as ret:
            ret.set_attribute("openinference.span.kind", "RETRIEVER")
            ret.set_attribute("input.value", "capital of France")
            for i, (doc_id, text, score) in enumerate([("d1", PARIS, 0.9), ("d2", BERLIN, 0.4)]):
                ret.set_attribute(f"retrieval.documents.{i}.document.id", doc_id)
                ret.set_attribute(f"retrieval.documents.{i}.document.content", text)
                ret.set_attribute(f"retrieval.documents.{i}.document.score", score)
            ret.set_attribute("retrieval.documents.0.document.metadata", json.dumps({"source": "wiki"}))
        with tracer.start_as_current_span("generate") as llm:
            llm.set_attribute("openinference.span.kind", "LLM")
            llm.set_attribute("llm.output_messages.0.message.role", "assistant")
            llm.set_attribute("llm.output_messages.0.message.content", "Paris is the capital. Bananas grow quickly.")
        root.set_attribute("output.value", "Paris is the capital. Bananas grow quickly.")
    with tracer.start_as_current_span("answer"):
        with tracer.start_as_current_span("retrieval kb") as ret:
            ret.set_attribute("gen_ai.operation.name", "retrieval")
            ret.set_attribute("gen_ai.retrieval.query.text", "Who wrote Hamlet?")
            ret.set_attribute("gen_ai.retrieval.documents", json.dumps([{"id": "h1", "score": 0.8, "content": HAMLET}]))
        with tracer.start_as_current_span("chat gpt") as llm:
            llm.set_attribute("gen_ai.operation.name", "chat")
            llm.set_attribute("gen_ai.output.messages", json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "Shakespeare wrote Hamlet."}]}]))
    if broken:
        with tracer.start_as_current_span("no retrieval") as root:
            root.set_attribute("input.value", "Hi?")
            root.set_attribute("output.value", "Hello.")
        with tracer.start_as_current_span("no answer"), tracer.start_as_current_span("retrieve") as ret:
            ret.set_attribute("openinference.span.kind", "RETRIEVER")
            ret.set_attribute("retrieval.documents.0.document.content", PARIS)


def console_file(path: Path, **kw: Any) -> Path:
    """The spans as ``ConsoleSpanExporter`` writes them (``span.to_json()``, one after another)."""
    with open(path, "w", encoding="utf-8") as fh:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=fh)))
        record_rag(provider, **kw)
        provider.shutdown()
    return path


def finished_spans(**kw: Any) -> tuple[ReadableSpan, ...]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    record_rag(provider, **kw)
    return exporter.get_finished_spans()


def otlp_json(**kw: Any) -> str:
    """The spans as one OTLP/JSON export request (protobuf's JSON mapping: base64 ids)."""
    return MessageToJson(encode_spans(finished_spans(**kw)))


def check_samples(samples: list[Sample | InputError]) -> None:
    paris, hamlet = samples[:2]
    assert isinstance(paris, Sample) and isinstance(hamlet, Sample)
    assert paris.query == "What is the capital of France?"
    assert paris.answer == "Paris is the capital. Bananas grow quickly."
    assert [(c.id, c.text, c.score) for c in paris.contexts] == [("d1", PARIS, 0.9), ("d2", BERLIN, 0.4)]
    assert paris.contexts[0].metadata == {"source": "wiki"}
    assert len(paris.id) == 32 and paris.metadata["root_span"] == "rag"
    assert hamlet.query == "Who wrote Hamlet?"  # the root has no input.value: the retrieval query
    assert hamlet.answer == "Shakespeare wrote Hamlet."
    assert [(c.id, c.text, c.score) for c in hamlet.contexts] == [("h1", HAMLET, 0.8)]


@pytest.mark.parametrize("name", ["traces.json", "traces.jsonl"])
def test_console_exporter_output(tmp_path: Path, name: str) -> None:
    path = console_file(tmp_path / name)
    assert input_format(path) == "otel"
    samples = list(read_samples(path))
    assert len(samples) == 2
    check_samples(samples)


def test_span_per_line_and_list(tmp_path: Path) -> None:
    spans = [json.loads(s.to_json()) for s in finished_spans()]
    lines = tmp_path / "spans.jsonl"
    lines.write_text("".join(json.dumps(s) + "\n" for s in spans), encoding="utf-8")
    check_samples(list(read_samples(lines)))
    listed = tmp_path / "spans.json"
    listed.write_text(json.dumps(spans), encoding="utf-8")
    check_samples(list(read_samples(listed)))


def test_otlp_json_document_and_lines(tmp_path: Path) -> None:
    encoded = otlp_json()
    doc = tmp_path / "otlp.json"
    doc.write_text(encoded, encoding="utf-8")
    assert input_format(doc) == "otel"
    check_samples(list(read_samples(doc)))
    # one export request per line, ids in hex (the Collector's file exporter)
    compact = json.loads(encoded)
    for rs in compact["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in sp:
                        sp[key] = base64.b64decode(sp[key]).hex()
    lines = tmp_path / "otlp.jsonl"
    lines.write_text(json.dumps(compact) + "\n", encoding="utf-8")
    samples = list(read_samples(lines))
    check_samples(samples)
    assert [s.id for s in samples] == [s.id for s in read_samples(doc)]  # type: ignore[union-attr]


def test_trace_without_retrieval_or_answer(tmp_path: Path) -> None:
    path = console_file(tmp_path / "traces.json", broken=True)
    with pytest.raises(InputError) as info:
        list(read_samples(path))
    err = info.value
    assert err.field == "contexts" and err.path == str(path) and err.line is not None
    assert "no retrieval span" in err.message and "'no retrieval'" in err.message
    items = list(read_samples(path, on_error="skip"))
    assert len(items) == 4
    check_samples(items)
    no_ret, no_answer = items[2:]
    assert isinstance(no_ret, InputError) and no_ret.field == "contexts"
    assert isinstance(no_answer, InputError) and no_answer.field == "answer"
    assert "no answer" in no_answer.message
    # the line named is where the trace's first span starts in the file
    assert path.read_text().splitlines()[no_answer.line - 1] == "{"  # type: ignore[operator]


def test_eval_cli_scores_by_hand(tmp_path: Path) -> None:
    path = console_file(tmp_path / "traces.json")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["eval", str(path), "-m", "lexical_faithfulness", "-o", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    scores = [row["metrics"]["lexical_faithfulness"]["score"] for row in rows]
    # trace 1: "Paris is the capital." {paris, capital} both in the contexts; "Bananas grow quickly."
    # none: 1 of 2 sentences supported. Trace 2: {shakespeare, wrote, hamlet}, 2 of 3 in the context
    # (>= 0.5): 1 of 1.
    assert scores == [0.5, 1.0]


def test_sample_json_is_not_traces(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text(json.dumps([{"name": "x", "query": "q", "contexts": ["c"], "context": {"trace_id": 1}}]))
    assert input_format(path) == "json"
    jl = tmp_path / "data.jsonl"
    jl.write_text(json.dumps({"query": "q", "resourceSpans": 1}) + "\n")
    assert input_format(jl) == "jsonl"
