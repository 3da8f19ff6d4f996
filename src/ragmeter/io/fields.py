"""Absent is not empty: the rule every engine applies to a field a metric needs.

* A needed field **absent from every row** (no such key, or null everywhere: a column named
  ``docs`` instead of ``contexts``) is an :class:`~ragmeter.errors.InputError` (CLI exit 2) that
  names the field, the keys the rows do have and the close match (``did you mean 'docs'? use
  --map docs=contexts``).
* Absent from **some** rows: those samples are *undefined* for the metrics that need it, with the
  reason ``undefined: no contexts field`` (``details.missing_field``), never scored.
* **Empty** (``contexts: []``, ``answer: ""``) is a value: the metric scores it (a retriever that
  returned nothing scores 0).

A metric's needed fields are its registry entry's ``requires`` (every one) and ``requires_any``
(at least one). :func:`missing_field` applies the rule to one sample, :func:`absent_result` is the
undefined result, and :class:`FieldPresence` counts, over a run, how often each metric met an
absent field, so the engine can raise :func:`absent_everywhere_error` at the end.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import InputError
from ..types import MetricResult, Sample

#: Column names people use for each field (the "did you mean" candidates besides close spellings).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "contexts": ("docs", "documents", "passages", "chunks", "retrieved", "retrieved_docs", "hits",
                 "results", "sources", "context", "retrieved_documents", "retrieved_passages"),
    "answer": ("output", "generated", "generation", "prediction", "completion", "model_answer",
               "generated_answer", "llm_answer", "result"),
    "reference": ("gold", "gold_answer", "expected", "expected_answer", "target", "reference_answer",
                  "ground_truths", "label", "answer_gold"),
    "relevant": ("qrels", "labels", "relevant_ids", "relevant_docs", "gold_ids", "gold_docs",
                 "positives", "positive_ids", "relevant_doc_ids", "gold_passages"),
    "query": ("q", "prompt", "input", "question_text", "query_text"),
}
#: Reason prefix and ``details`` key of an undefined result caused by an absent field.
MISSING_KEY = "missing_field"
#: ``details`` key set on results whose labels can never match the contexts (see relevance.py).
UNMATCHABLE_KEY = "labels_cannot_match"


def missing_field(spec: Any, sample: Sample) -> str | None:
    """The first field ``spec`` needs that ``sample`` does not give (``a|b`` for an unmet
    ``requires_any``), or None when every needed field is there (possibly empty)."""
    for f in getattr(spec, "requires", ()):
        if not sample.has(f):
            return "contexts" if f == "context_texts" else f
    any_of = getattr(spec, "requires_any", ())
    if any_of and not any(sample.has(f) for f in any_of):
        return "|".join(any_of)
    return None


def absent_reason(field: str) -> str:
    """``undefined: no contexts field`` (``a|b``: ``no relevant field and no reference field``)."""
    return "undefined: " + " and ".join(f"no {f} field" for f in field.split("|"))


def absent_result(name: str, version: str, field: str) -> MetricResult:
    """The undefined result of metric ``name`` on a sample that lacks ``field``."""
    return MetricResult(name=name, score=None, reason=absent_reason(field), details={MISSING_KEY: field},
                        version=version)


def close_match(field: str, keys: Iterable[str]) -> str | None:
    """The key among ``keys`` most likely meant as ``field`` (a known synonym first, then spelling)."""
    keys = [k for k in keys if k not in ("id", "metadata")]
    lower = {k.lower(): k for k in keys}
    for syn in SYNONYMS.get(field, ()):
        if syn in lower:
            return lower[syn]
    got = difflib.get_close_matches(field, keys, n=1, cutoff=0.6)
    return got[0] if got else None


def did_you_mean(field: str, keys: Iterable[str]) -> str | None:
    """``did you mean 'docs'? use --map docs=contexts (Python: field_map={'docs': 'contexts'})`` when
    a key among ``keys`` looks like ``field`` under another name (:func:`close_match`), else None."""
    match = close_match(field, keys)
    if match is None:
        return None
    return f"did you mean {match!r}? use --map {match}={field} (Python: field_map={{{match!r}: {field!r}}})"


def _relevance_like(value: Any) -> bool:
    """Whether ``value`` could be relevance labels: ids (a list of strings or numbers, or of
    objects with an ``id``), or grades by id (a dict of numbers; a yes/no is no grade); None too."""
    if value is None:
        return True
    if isinstance(value, list | tuple):
        return all(isinstance(v, str | int | dict) and not isinstance(v, bool) for v in value)
    if isinstance(value, dict):
        return all(isinstance(v, int | float) and not isinstance(v, bool) for v in value.values())
    return isinstance(value, str)


def field_hints(samples: Iterable[Sample]) -> list[str]:
    """For each field of :data:`SYNONYMS` that no sample gives while a key of theirs looks like it
    (``docs`` for ``contexts``): ``no row has a 'contexts' field; did you mean 'docs'? ...``. What a
    run whose metrics the data chose says, since no metric then asks for the field by name. A key
    is offered for ``relevant`` only when its values could be relevance labels
    (:func:`_relevance_like`): ``labels: {"faithful": true}``, judge-check's format, is not."""
    rows = [s for s in samples if isinstance(s, Sample)]
    keys = list(dict.fromkeys(str(k) for s in rows for k in s.metadata))
    hints = []
    for field in SYNONYMS:
        offered = keys if field != "relevant" else [
            k for k in keys if all(_relevance_like(s.metadata.get(k)) for s in rows)]
        if rows and not any(s.has(field) for s in rows) and (hint := did_you_mean(field, offered)) is not None:
            hints.append(f"no row has a {field!r} field; {hint}")
    return hints


class FieldPresence:
    """Counts, over one run, the samples each metric found a needed field absent in.

    ``note`` takes one sample's results; ``note_bulk`` adds counts computed elsewhere (the columnar
    engine's fast rows); ``keys`` collects the row keys seen (for the message).
    """

    def __init__(self) -> None:
        self.good = 0
        self.absent: dict[str, Counter[str]] = {}
        self.unmatchable = 0
        self.keys: dict[str, None] = {}

    def note_sample(self, sample: Sample) -> None:
        """Remember the keys of ``sample`` (canonical fields it gives and its unknown columns)."""
        if len(self.keys) >= 64:
            return
        for f in ("id", "query", "answer", "contexts", "reference", "relevant"):
            if sample.has(f) or f == "id":
                self.keys.setdefault(f, None)
        for k in list(sample.metadata)[:64]:
            self.keys.setdefault(str(k), None)

    def note(self, results: dict[str, MetricResult]) -> None:
        """Count one good (read without an input error) sample's results."""
        self.good += 1
        unmatchable = False
        for name, r in results.items():
            field = r.details.get(MISSING_KEY) if r.details else None
            if field is not None:
                self.absent.setdefault(name, Counter())[field] += 1
            unmatchable = unmatchable or bool(r.details and r.details.get(UNMATCHABLE_KEY))
        self.unmatchable += unmatchable

    def note_bulk(self, good: int, absent: dict[str, dict[str, int]]) -> None:
        """Add ``good`` samples of which ``absent[metric][field]`` lacked ``field``."""
        self.good += good
        for name, by_field in absent.items():
            for field, count in by_field.items():
                if count:
                    self.absent.setdefault(name, Counter())[field] += count

    def absent_everywhere(self) -> dict[str, list[str]]:
        """``{field: [metrics]}`` for every needed field that no good sample gave."""
        out: dict[str, list[str]] = {}
        if self.good == 0:
            return out
        for name, counts in self.absent.items():
            for field, count in counts.items():
                if count == self.good:
                    out.setdefault(field, []).append(name)
        return out

    def run_info(self) -> dict[str, Any]:
        """What ``summary.json``'s ``run.input_checks`` records (empty when nothing was found)."""
        info: dict[str, Any] = {}
        partly = {name: dict(c) for name, c in self.absent.items() if c}
        if partly:
            info["absent_fields"] = partly
        if self.unmatchable:
            info["unmatchable_labels"] = self.unmatchable
        return info

    def check(self, *, path: str | None = None, keys: Sequence[str] | None = None) -> None:
        """Raise :func:`absent_everywhere_error` when a needed field was absent from every row."""
        missing = self.absent_everywhere()
        if missing:
            raise absent_everywhere_error(missing, list(keys) if keys is not None else list(self.keys), path)


def absent_everywhere_error(missing: dict[str, list[str]], keys: list[str], path: str | None) -> InputError:
    """The error for fields no row has: the field, the metrics that need it, the keys the rows
    have and the close match with the ``--map`` to use."""
    parts = []
    shown = ", ".join(map(repr, keys[:20])) + (", ..." if len(keys) > 20 else "")
    for field, metrics in missing.items():
        names = field.split("|")
        what = " or ".join(repr(f) for f in names)
        part = f"no row has a {what} field, which {', '.join(metrics)} need(s)"
        hint = next((h for f in names if (h := did_you_mean(f, keys)) is not None), None)
        parts.append(part + (f"; {hint}" if hint else ""))
    message = "; ".join(parts) + f". The rows have: {shown or 'no keys'}"
    field_name = next(iter(missing)).split("|")[0]
    return InputError(message, path=path, field=field_name)
