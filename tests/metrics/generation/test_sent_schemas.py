"""Every reply schema ragmeter sends is one llama-cpp-python's grammar converter enforces in full.

Why: against llama-cpp-python 0.3.36 the benches recorded
``json_schema->json_object`` fallbacks and, for passage_recall, a score 0 for an ESSENTIAL (1-5)
section. Read from its source (``llama_cpp/server/types.py`` ``response_format`` and
``llama_cpp/llama_types.py`` ``ChatCompletionRequestResponseFormat``: ``type`` is
``Literal["text", "json_object"]``) and checked end to end on a loopback server: the server
refuses ``{"type": "json_schema"}`` whatever the schema (HTTP 500, pydantic ``literal_error``), and
``{"type": "json_object", "schema": ...}`` is grammar-constrained by
``llama_grammar.json_schema_to_gbnf``. That converter accepted every ragmeter schema, but
``SchemaConverter.visit`` (``llama_cpp/llama_grammar.py`` lines 697-844 in 0.3.36) silently drops
every keyword its branch does not read: ``minimum``/``maximum`` on an integer or number gave "any
integer", so the judge could write 0 (or -3, or 9) for a 1-5 score. And where the converter raises,
the server falls back to a plain JSON grammar without telling anyone
(``llama_chat_format._grammar_for_json_schema(fallback_to_json=True)``).

:func:`unenforced` re-states which keywords each branch of ``visit`` reads, so CI (which does not
install llama-cpp-python) checks every sent schema against it; where ``llama_cpp`` is importable
(or ``RAGMETER_LLAMA_CPP_PYTHON`` names a Python that has it) the real converter checks them too.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from ragmeter import Sample, evaluate
from ragmeter.judges.judge import judge_cache_key, request_schema
from ragmeter.metrics.generation._schema import Graded
from ragmeter.metrics.generation.passage_recall import scores_for
from ragmeter.metrics.generation.rubric import register_rubric

from .rules import REPLIES, judge_rule
from .test_fake_judge import NAMES, ROW
from .test_judged_metrics import BagOfWordsEmbedder
from .test_rubric import registry_snapshot  # noqa: F401  (autouse: rubrics registered here are dropped after)

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
#: Annotations: read by no branch, constrain nothing (dropping them loses nothing).
ANNOTATIONS = {"title", "description", "$defs", "definitions", "default", "examples", "$schema", "$comment"}
#: Keywords a range can be written with; enforced only through an ``enum``/``const`` that satisfies them.
RANGE = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
PRIMITIVES = {"string", "number", "integer", "boolean", "null", "object", "array"}
STRING_FORMATS = {"date", "time", "date-time", "uuid", "uuid1", "uuid2", "uuid3", "uuid4", "uuid5"}


def _branch(node: dict[str, Any]) -> tuple[str, set[str]]:
    """The branch of ``SchemaConverter.visit`` that handles ``node`` and the keywords it reads, in
    the order ``visit`` tests them."""
    kind = node.get("type")
    if "$ref" in node:
        return "ref", {"$ref"}
    if "oneOf" in node or "anyOf" in node:
        return "union", {"oneOf", "anyOf"}
    if isinstance(kind, list):
        return "type-list", {"type"}
    if "const" in node:
        return "const", {"const", "type"}
    if "enum" in node:
        return "enum", {"enum", "type"}
    if kind in (None, "object") and ("properties" in node or node.get("additionalProperties", True) is not True):
        return "object", {"type", "properties", "required", "additionalProperties"}
    if kind in (None, "object") and "allOf" in node:
        return "allOf", {"type", "allOf"}  # merges the parts' properties only
    if kind in (None, "array") and ("items" in node or "prefixItems" in node):
        return "array", {"type", "items", "prefixItems", "minItems", "maxItems"}
    if kind in (None, "string") and "pattern" in node:
        return "pattern", {"type", "pattern"}
    if kind in (None, "string") and node.get("format") in STRING_FORMATS:
        return "format", {"type", "format"}
    if kind == "string" and ("minLength" in node or "maxLength" in node):
        return "length", {"type", "minLength", "maxLength"}
    return "primitive", {"type"}


def _in_range(value: Any, node: dict[str, Any]) -> bool:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return (value >= node.get("minimum", value) and value <= node.get("maximum", value)
            and value > node.get("exclusiveMinimum", value - 1) and value < node.get("exclusiveMaximum", value + 1)
            and (value % node["multipleOf"] == 0 if "multipleOf" in node else True))


def unenforced(schema: Any, path: str = "#") -> list[str]:
    """``path: keyword`` for every keyword of ``schema`` that llama-cpp-python 0.3.36's converter
    would drop (a constraint the grammar does not enforce) or reject (the server then falls back
    to plain JSON). An ``enum``/``const`` whose values all satisfy a node's range enforces it."""
    if not isinstance(schema, dict):
        return [f"{path}: not an object schema"]
    branch, reads = _branch(schema)
    out = []
    for key in sorted(set(schema) - reads - ANNOTATIONS):
        literals = schema.get("enum", [schema.get("const")]) if branch in ("enum", "const") else []
        if key in RANGE and literals and all(_in_range(v, schema) for v in literals):
            continue
        out.append(f"{path}: {key} (ignored by the {branch} branch)")
    if branch == "ref" and not str(schema["$ref"]).startswith("#/"):
        out.append(f"{path}: $ref {schema['$ref']} (only local #/ refs are converted)")
    if branch == "primitive" and schema.get("type", "object") not in PRIMITIVES:
        out.append(f"{path}: type {schema.get('type')} (unknown: the converter raises)")
    if branch in ("type-list", "allOf"):
        out.append(f"{path}: {branch} (only partly converted)")
    children: list[tuple[str, Any]] = []
    for key in ("$defs", "definitions", "properties"):
        children += [(f"{path}/{key}/{k}", v) for k, v in (schema.get(key) or {}).items()]
    for key in ("anyOf", "oneOf", "prefixItems"):
        children += [(f"{path}/{key}/{i}", v) for i, v in enumerate(schema.get(key) or [])]
    if isinstance(schema.get("items"), dict):
        children.append((f"{path}/items", schema["items"]))
    if isinstance(schema.get("additionalProperties"), dict):
        children.append((f"{path}/additionalProperties", schema["additionalProperties"]))
    for where, child in children:
        out += unenforced(child, where)
    return out


@pytest.fixture
def sent(fake_llm, make_judge) -> dict[str, dict[str, Any]]:
    """Reply model name -> the JSON schema of the ``response_format`` ragmeter sent, over every
    built-in judged metric (every mode with its own reply) and a numeric and a yes/no rubric, run
    through the real judge layer against the loopback server."""
    seen = []
    fake_llm.rule = lambda call: (seen.append(call), judge_rule(call))[1]
    register_rubric("sent_rating", "The answer is courteous.", scale="0-10")  # steps written by the judge
    register_rubric("sent_verdict", "The answer is courteous.", steps=["Read it."], scale="yes/no")
    judge, sample = make_judge(), Sample.model_validate(ROW)
    runs = [evaluate([sample], [*NAMES, "sent_rating", "sent_verdict"], judge=judge),
            evaluate([sample], ["answer_relevancy(method=questions,steps=separate)"], judge=judge,
                     embedder=BagOfWordsEmbedder())]
    errors = {k: m["error"] for run in runs for k, m in run.records[0]["metrics"].items() if m["error"] is not None}
    assert errors == {}
    out = {}
    for call in seen:
        if call.body.get("max_tokens") == 1 and "response_format" not in call.body:
            continue  # answer_relevancy's one-word decision: free text, no schema sent
        rf = call.body.get("response_format") or {}
        assert rf.get("type") == "json_schema", rf  # the fake server accepts json_schema: what is sent first
        out[rf["json_schema"]["name"]] = rf["json_schema"]["schema"]
    return out


def test_the_checker_finds_what_llama_cpp_python_drops():
    # the schemas sent before this change, written out by hand: ranges only as minimum/maximum
    graded_before = {"type": "object", "title": "Graded", "additionalProperties": False,
                     "required": ["reason", "rating"],
                     "properties": {"reason": {"type": "string"},
                                    "rating": {"type": "number", "minimum": 0, "maximum": 10}}}
    assert unenforced(graded_before) == ["#/properties/rating: maximum (ignored by the primitive branch)",
                                         "#/properties/rating: minimum (ignored by the primitive branch)"]
    # an enum enforces the range only when every value is in it
    assert unenforced({"type": "integer", "minimum": 1, "maximum": 5, "enum": [1, 2, 3, 4, 5]}) == []
    assert unenforced({"type": "integer", "minimum": 1, "maximum": 5, "enum": [0, 1]}) == [
        "#: maximum (ignored by the enum branch)", "#: minimum (ignored by the enum branch)"]
    assert unenforced({"type": "array", "items": {"type": "string"}, "uniqueItems": True}) == [
        "#: uniqueItems (ignored by the array branch)"]
    assert unenforced({"$ref": "https://example.org/s.json"}) == [
        "#: $ref https://example.org/s.json (only local #/ refs are converted)"]
    assert unenforced({"anyOf": [{"type": "string", "maxLength": 3, "minLength": 1},
                                 {"type": "null", "minimum": 1}]}) == [
        "#/anyOf/1: minimum (ignored by the primitive branch)"]


def test_every_sent_schema_is_enforced_in_full_by_llama_cpp_python(sent):
    names = {name.rstrip("0123456789") for name in sent}
    assert names == set(REPLIES)  # every reply model of every judged metric was sent (and the rule knows it)
    problems = {name: unenforced(schema) for name, schema in sent.items()}
    assert problems == {name: [] for name in sent}
    # the rating scales are in the schema as whole-number enums (what the prompts ask for)
    assert sent["Graded"]["properties"]["rating"]["enum"] == list(range(11))
    assert sent["Grade"]["properties"]["grade"]["enum"] == [1, 2, 3, 4, 5]
    assert sent["RubricRating"]["properties"]["rating"]["enum"] == list(range(11))


def test_passage_recall_sends_1_to_5_for_essential_sections_and_0_to_5_for_bonus_ones():
    s = request_schema(scores_for(3, 2))
    entry = s["properties"]["sections"]
    assert (entry["minItems"], entry["maxItems"]) == (3, 3)
    ess, bonus = entry["items"]["anyOf"]
    assert ess["properties"]["section"]["enum"] == ["E1", "E2"]
    assert ess["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    assert bonus["properties"]["section"]["enum"] == ["B1"] and bonus["properties"]["score"]["enum"] == list(range(6))
    for item in (ess, bonus):  # OpenAI strict mode: every property required, no other property
        assert item["required"] == ["section", "reasoning", "score"] and item["additionalProperties"] is False
    only_essential = request_schema(scores_for(2, 2))["properties"]["sections"]["items"]
    assert only_essential["properties"]["section"]["enum"] == ["E1", "E2"] and "anyOf" not in only_essential
    assert unenforced(s) == [] and unenforced(only_essential) == []
    # validation is unchanged: lenient about how a label is written, strict about an ESSENTIAL 0
    model = scores_for(3, 2)
    ok = {"sections": [{"section": "[E1]", "reasoning": "r", "score": 3}, {"section": "e2", "reasoning": "r",
                                                                           "score": 1},
                       {"section": "B1", "reasoning": "r", "score": 0}]}
    assert [x.score for x in model.model_validate(ok).sections] == [3, 1, 0]
    ok["sections"][1]["score"] = 0
    with pytest.raises(ValueError, match="ESSENTIAL"):
        model.model_validate(ok)


def test_a_changed_sent_schema_changes_the_cache_key():
    fields = dict(backend="openai", model="m", base_url=None, messages=[{"role": "user", "content": "x"}],
                  temperature=0.0, max_tokens=10, seed=None, template_version="v")
    now = request_schema(Graded)
    before = json.loads(json.dumps(now))
    del before["properties"]["rating"]["enum"]
    assert judge_cache_key(schema=now, **fields) != judge_cache_key(schema=before, **fields)
    assert judge_cache_key(schema=now, **fields) == judge_cache_key(schema=json.loads(json.dumps(now)), **fields)


#: Run by the Python that has llama_cpp: each schema through the converter the server uses, with
#: no fallback to plain JSON; with a GGUF path, llama.cpp's own grammar parser too (vocab only).
_CONVERT = r"""
import json, sys
from llama_cpp import llama_grammar
schemas, gguf = json.load(sys.stdin), sys.argv[1] if len(sys.argv) > 1 else ""
vocab = None
if gguf:
    import llama_cpp
    vocab = llama_cpp.Llama(model_path=gguf, vocab_only=True, verbose=False)._model.vocab
out = {}
for name, schema in schemas.items():
    try:
        grammar = llama_grammar.json_schema_to_gbnf(json.dumps(schema))
    except Exception as exc:
        out[name] = {"error": f"{type(exc).__name__}: {exc}"}
        continue
    parsed = None
    if vocab is not None:
        p = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
        parsed = bool(p)
        if p:
            llama_cpp.llama_sampler_free(p)
    out[name] = {"grammar": grammar, "parsed": parsed}
print(json.dumps(out))
"""


def _llama_python() -> list[str] | None:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        exe = os.environ.get("RAGMETER_LLAMA_CPP_PYTHON")
        return [exe] if exe else None
    import sys

    return [sys.executable]


def test_llama_cpp_python_converts_every_sent_schema_with_its_ranges(sent):
    exe = _llama_python()
    if exe is None:
        pytest.skip("llama_cpp not importable and RAGMETER_LLAMA_CPP_PYTHON not set (CI does not install it)")
    gguf = os.environ.get("RAGMETER_LLAMA_GGUF", "")
    done = subprocess.run([*exe, "-c", _CONVERT, *([gguf] if gguf else [])], input=json.dumps(sent),
                          capture_output=True, text=True, timeout=300, check=True)
    got = json.loads(done.stdout)
    assert {k: v.get("error") for k, v in got.items()} == {k: None for k in sent}
    if gguf:
        assert {k: v["parsed"] for k, v in got.items()} == {k: True for k in sent}
    # every range is a rule of exactly its whole numbers: the grammar cannot write 0 for a 1-5 score
    alternatives = {line.partition(" ::= ")[2] for g in got.values() for line in g["grammar"].splitlines()}
    assert " | ".join(f'"{k}"' for k in range(11)) in alternatives  # Graded, Rating: 0-10
    assert " | ".join(f'"{k}"' for k in range(1, 6)) in alternatives  # Grade, ESSENTIAL sections
    assert " | ".join(f'"{k}"' for k in range(6)) in alternatives  # BONUS sections
    assert '"\\"E1\\""' in alternatives and '"\\"B1\\""' in alternatives  # passage_recall's labels
    # no range is left as an unbounded number: "number"/"integer" rules only for the unranged indices
    unbounded = {name for name, g in got.items() if "integral-part ::=" in g["grammar"]}
    assert unbounded == {name for name in sent if name.rstrip("0123456789") in ("Verdicts", "Ratings",
                                                                                 "ChunkVerdicts")}
