"""Reading OpenTelemetry traces of a RAG application as samples: the ``otel`` input format.

Two serialisations of spans are read, told apart by their content:

* the SDK's own JSON, one object per span as ``ReadableSpan.to_json()`` prints it (what
  ``ConsoleSpanExporter`` writes: pretty-printed objects one after another, or one per line);
* OTLP/JSON, ``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}``, one document or one
  per line (the OpenTelemetry Collector's file exporter; ``MessageToJson`` of an OTLP export
  request). Trace and span ids may be hex or base64.

A JSON list of either is read too. Spans are grouped by trace id; each trace is one sample, in
the order of the traces' first spans in the file, with the trace id as its ``id``:

* **contexts**: the documents of the trace's retrieval span (the one that ended last when there
  are several). A retrieval span has ``openinference.span.kind = RETRIEVER`` or
  ``gen_ai.operation.name = retrieval``; its documents are the OpenInference attributes
  ``retrieval.documents.N.document.content`` / ``.id`` / ``.score`` / ``.metadata`` (JSON), or
  ``gen_ai.retrieval.documents`` (a list, or its JSON string, of ``{id, score, content}``).
* **answer**: the output of the trace's LLM span that ended last (``openinference.span.kind =
  LLM``, or ``gen_ai.operation.name`` one of ``chat``, ``text_completion``,
  ``generate_content``): ``gen_ai.output.messages`` (JSON, the text parts of the last message),
  ``llm.output_messages.N.message.content`` (the last), ``gen_ai.completion`` (a string, or
  ``gen_ai.completion.N.content``), then ``output.value``; without one, the root span's
  ``output.value``.
* **query**: the root span's ``input.value``, else the retrieval span's
  ``gen_ai.retrieval.query.text`` or ``input.value``, else ``gen_ai.prompt`` on the LLM span.

A trace without a retrieval span, or without an answer, is an
:class:`~ragmeter.errors.InputError` naming the file, the line of the trace's first span and the
missing field (``contexts`` or ``answer``). The whole file is read before the first sample, since a
trace's spans may be anywhere in it (an exporter writes a child before its parent).
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError

#: ``gen_ai.operation.name`` values of a generation span.
LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})

_GZIP_MAGIC = b"\x1f\x8b"
_HEAD_CHARS = 65_536
_SDK_SPAN_HEAD = re.compile(r'^\[?\s*\{\s*"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"context"\s*:\s*\{\s*"trace_id"')
_OTLP_HEAD = re.compile(r'^\[?\s*\{\s*"resource_?[sS]pans"\s*:')
_DOC_KEY = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(content|id|score|metadata)$")
_OUT_MSG_KEY = re.compile(r"^llm\.output_messages\.(\d+)\.message\.content$")
_COMPLETION_KEY = re.compile(r"^gen_ai\.completion\.(\d+)\.content$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")


@dataclass
class Span:
    """The parts of one span that a trace's sample is made from."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    end: str | int
    attributes: dict[str, Any]
    line: int
    index: int  # 1-based, in file order


@dataclass
class _Trace:
    spans: list[Span] = field(default_factory=list)


def _read_text(path: str) -> str:
    with open(path, "rb") as fh:
        gz = fh.read(2) == _GZIP_MAGIC
    opener: Any = gzip.open if gz else open
    try:
        with opener(path, "rt", encoding="utf-8-sig") as fh:
            text: str = fh.read()
    except UnicodeDecodeError as exc:
        raise InputError("not UTF-8 text: expected UTF-8 encoded OpenTelemetry JSON", path=path) from exc
    except (EOFError, gzip.BadGzipFile, OSError) as exc:
        raise InputError(f"cannot read the file: {exc}", path=path) from exc
    return text


def looks_like_spans(path: str) -> bool:
    """True when the file's first record is an OpenTelemetry span (SDK JSON) or an OTLP/JSON
    document; what a ``.json`` / ``.jsonl`` file holds decides its format, not its name."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_HEAD_CHARS)
        if raw[:2] == _GZIP_MAGIC:
            with gzip.open(path, "rb") as gz:
                raw = gz.read(_HEAD_CHARS)
    except (OSError, EOFError, gzip.BadGzipFile):
        return False
    head = raw.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    return bool(_SDK_SPAN_HEAD.match(head) or _OTLP_HEAD.match(head))


def _hex_id(value: Any) -> str | None:
    """A trace or span id as lower-case hex: SDK ``0x…``, OTLP/JSON hex, or protobuf JSON base64."""
    if not isinstance(value, str) or not value:
        return None
    text = value.removeprefix("0x")
    if len(text) in (16, 32) and _HEX.match(text):
        return text.lower()
    try:
        return base64.b64decode(value, validate=True).hex() or None
    except (binascii.Error, ValueError):
        return None


def _any_value(value: Any) -> Any:
    """An OTLP/JSON ``AnyValue`` as a Python value."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return _kv_attributes((value["kvlistValue"] or {}).get("values", []))
    return None


def _kv_attributes(items: Any) -> dict[str, Any]:
    if isinstance(items, dict):  # already a mapping (SDK JSON)
        return dict(items)
    out: dict[str, Any] = {}
    for item in items or []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = _any_value(item.get("value"))
    return out


def _spans_of(record: Any, line: int, first_index: int) -> list[Span | str]:
    """The spans of one JSON record (an SDK span, an OTLP document, or a list of either); a span
    that cannot be read is the message saying why, in its place."""
    if isinstance(record, list):
        out: list[Span | str] = []
        for item in record:
            out.extend(_spans_of(item, line, first_index + len(out)))
        return out
    if not isinstance(record, dict):
        return [f"expected a span object or an OTLP/JSON document, got {type(record).__name__}"]
    resource_spans = record.get("resourceSpans", record.get("resource_spans"))
    if resource_spans is not None:
        raw = [sp for rs in resource_spans or [] for ss in (rs.get("scopeSpans") or rs.get("scope_spans") or [])
               for sp in ss.get("spans") or []]
        return [_otlp_span(sp, line, first_index + i) for i, sp in enumerate(raw)]
    return [_sdk_span(record, line, first_index)]


def _sdk_span(record: dict[str, Any], line: int, index: int) -> Span | str:
    ctx: Any = record.get("context") if isinstance(record.get("context"), dict) else {}
    trace_id, span_id = _hex_id(ctx.get("trace_id")), _hex_id(ctx.get("span_id"))
    if trace_id is None or span_id is None:
        return "expected a span with context.trace_id and context.span_id (as span.to_json() writes)"
    return Span(trace_id, span_id, _hex_id(record.get("parent_id")), str(record.get("name", "")),
                str(record.get("end_time") or ""), _kv_attributes(record.get("attributes")), line, index)


def _otlp_span(record: Any, line: int, index: int) -> Span | str:
    if not isinstance(record, dict):
        return f"expected an OTLP span object, got {type(record).__name__}"
    trace_id = _hex_id(record.get("traceId", record.get("trace_id")))
    span_id = _hex_id(record.get("spanId", record.get("span_id")))
    if trace_id is None or span_id is None:
        return "expected an OTLP span with traceId and spanId"
    end: Any = record.get("endTimeUnixNano", record.get("end_time_unix_nano", 0))
    try:
        end = int(end)
    except (TypeError, ValueError):
        end = 0
    return Span(trace_id, span_id, _hex_id(record.get("parentSpanId", record.get("parent_span_id"))),
                str(record.get("name", "")), end, _kv_attributes(record.get("attributes")), line, index)


def read_spans(path: str) -> Iterator[tuple[int, Span | InputError]]:
    """Every span of the file in file order, as ``(line, span)``; a record that is not JSON, or a
    span without ids, is an InputError naming its line in the span's place (reading resumes at
    the next line that starts with ``{``)."""
    text = _read_text(path)
    decoder = json.JSONDecoder()
    pos, line, index, n = 0, 1, 1, len(text)
    while True:
        start = pos
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        line += text.count("\n", start, pos)
        if pos >= n:
            return
        try:
            record, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            yield line, InputError(f"malformed JSON: {msg}; expected OpenTelemetry span JSON", path=path, line=line)
            nxt = text.find("\n{", pos)
            nxt = n if nxt < 0 else nxt + 1
            line += text.count("\n", pos, nxt)
            pos = nxt
            continue
        for span in _spans_of(record, line, index):
            index += 1
            yield line, (span if isinstance(span, Span) else
                         InputError(f"{span} (span {index - 1} of the file)", path=path, line=line))
        line += text.count("\n", pos, end)
        pos = end


def trace_rows(path: str) -> Iterator[tuple[int, Any, str]]:
    """The file's traces as reader rows ``(line of the first span, record or InputError, where)``,
    in the order of their first spans; a record is a sample dict (``id`` = the trace id)."""
    traces: dict[str, _Trace] = {}
    for line, span in read_spans(path):
        if isinstance(span, InputError):
            yield line, span, ""
            continue
        traces.setdefault(span.trace_id, _Trace()).spans.append(span)
    for trace_id, trace in traces.items():
        first = trace.spans[0]
        where = f" (trace {trace_id}, first span {first.index} of the file)"
        record = trace_record(trace_id, trace.spans)
        if isinstance(record, tuple):
            field_name, message = record
            yield first.line, InputError(message + where, path=path, line=first.line, field=field_name), where
        else:
            yield first.line, record, where


def _kind(span: Span) -> str:
    attrs = span.attributes
    kind = str(attrs.get("openinference.span.kind", "")).upper()
    op = str(attrs.get("gen_ai.operation.name", "")).lower()
    if kind == "RETRIEVER" or op == "retrieval":
        return "retrieval"
    if kind == "LLM" or op in LLM_OPERATIONS:
        return "llm"
    return ""


def _last(spans: list[Span]) -> Span | None:
    """The span that ended last (file order breaks ties)."""
    return max(reversed(spans), key=lambda s: (isinstance(s.end, int), s.end), default=None)


def trace_record(trace_id: str, spans: list[Span]) -> dict[str, Any] | tuple[str, str]:
    """The sample record of one trace, or ``(field, message)`` saying what the trace lacks."""
    retrievals = [s for s in spans if _kind(s) == "retrieval"]
    llms = [s for s in spans if _kind(s) == "llm"]
    ids = {s.span_id for s in spans}
    root = next((s for s in spans if s.parent_id is None or s.parent_id not in ids), spans[0])
    names = ", ".join(repr(s.name) for s in spans[:8]) + (", ..." if len(spans) > 8 else "")
    retrieval = _last(retrievals)
    if retrieval is None:
        return "contexts", (
            "no retrieval span: expected a span with openinference.span.kind=RETRIEVER or "
            f"gen_ai.operation.name=retrieval; the trace's spans: {names}")
    contexts = documents(retrieval.attributes)
    if isinstance(contexts, str):
        return "contexts", f"retrieval span {retrieval.name!r}: {contexts}"
    llm = _last(llms)
    answer = _answer(llm.attributes) if llm is not None else None
    if answer is None:
        answer = _text(root.attributes.get("output.value"))
    if answer is None:
        return "answer", (
            "no answer: expected an LLM span (openinference.span.kind=LLM or gen_ai.operation.name=chat) "
            "with gen_ai.output.messages, llm.output_messages.N.message.content, gen_ai.completion or "
            f"output.value, or output.value on the root span; the trace's spans: {names}")
    query = (_text(root.attributes.get("input.value"))
             or _text(retrieval.attributes.get("gen_ai.retrieval.query.text"))
             or _text(retrieval.attributes.get("input.value"))
             or (_text(llm.attributes.get("gen_ai.prompt")) if llm is not None else None))
    record: dict[str, Any] = {"id": trace_id, "answer": answer, "contexts": contexts,
                              "metadata": {"trace_id": trace_id, "root_span": root.name}}
    if query is not None:
        record["query"] = query
    return record


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _json_value(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def documents(attrs: dict[str, Any]) -> list[dict[str, Any]] | str:
    """A retrieval span's documents as context records, in rank order (a message when it has none)."""
    flat: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        m = _DOC_KEY.match(key)
        if m:
            part = {"content": "text", "metadata": "metadata"}.get(m.group(2), m.group(2))
            flat.setdefault(int(m.group(1)), {})[part] = _json_value(value) if part == "metadata" else value
    if flat:
        return [flat[i] for i in sorted(flat)]
    docs = _json_value(attrs.get("gen_ai.retrieval.documents"))
    if isinstance(docs, list):
        out = []
        for doc in docs:
            doc = _json_value(doc)
            if isinstance(doc, dict):
                doc = {("text" if k == "content" else k): v for k, v in doc.items()}
            out.append(doc)
        return out
    return ("no documents: expected retrieval.documents.N.document.content (or .id) attributes, or "
            "gen_ai.retrieval.documents (a list of {id, score, content}); an empty retrieval records "
            "gen_ai.retrieval.documents = []")


def _answer(attrs: dict[str, Any]) -> str | None:
    messages = _json_value(attrs.get("gen_ai.output.messages"))
    if isinstance(messages, list) and messages and isinstance(messages[-1], dict):
        parts = messages[-1].get("parts") or []
        texts = [p.get("content") for p in parts if isinstance(p, dict) and p.get("type", "text") == "text"]
        text = "".join(t for t in texts if isinstance(t, str))
        if text.strip():
            return text
    numbered = {int(m.group(1)): v for k, v in attrs.items()
                if (m := _OUT_MSG_KEY.match(k) or _COMPLETION_KEY.match(k))}
    if numbered and _text(numbered[max(numbered)]):
        return str(numbered[max(numbered)])
    return _text(attrs.get("gen_ai.completion")) or _text(attrs.get("output.value"))
