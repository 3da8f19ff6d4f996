"""Reading a judge's reply into a typed object: tolerant extraction, strict validation.

Models wrap JSON in prose or Markdown fences, leave trailing commas, or quote other JSON before
their verdict. :func:`extract_json` finds the reply's **last** well-formed top-level JSON object
(a verdict comes last; anything the model quoted earlier, such as a fake ``{"score": 5}`` smuggled
into the evaluated answer, comes before it). :func:`parse_reply` then validates that one object
against the declared pydantic model, strictly: no fallback to an earlier object, no default
value, no score of 0. Whatever goes wrong is a :class:`~ragmeter.errors.JudgeParseError` carrying
the raw reply, and nothing else is ever raised, whatever the text (property-tested).
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import JudgeParseError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)
# The tokens a trailing-comma repair walks: a whole JSON string (so a "," or "}" inside one is
# left as written), a bracket, or a comma whose next non-space character closes a container.
_REPAIR_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{\[]|[}\]]|,(?=\s*[}\]])', re.DOTALL)
# strict=False: a raw control character (a newline, a tab, a backspace from a Windows path like
# ".venv\bin") inside a string is read as itself; small judges write them, and strict JSON
# rejects the whole object for it
_DECODER = json.JSONDecoder(strict=False)
#: Characters of a reply that are read. A valid reply of any realistic length (a long reasoning
#: field, 100 verdicts) is parsed whole: the whole-text parse is linear. Only beyond this is a
#: reply cut, so a runaway reply can never hang the run.
_MAX_REPLY = 2_000_000
_MAX_FAILED_STARTS = 500  # '{' that open no valid object before we give up (bounds the work)
_MAX_FAILED_WORK = 4_000_000  # characters read by failed attempts before we give up


def _loads_lenient(text: str) -> Any:
    """``json.loads`` that also accepts trailing commas and raw control characters in strings.
    Raises ValueError."""
    try:
        return json.loads(text, strict=False)
    except ValueError:
        fixed, removed, stop = _drop_trailing_commas(text, 0)
        if not removed or text[stop:].strip():  # nothing dropped, or more text after the object
            raise
        return json.loads(fixed, strict=False)


def _drop_trailing_commas(text: str, start: int) -> tuple[str, list[int], int]:
    """``text[start:]`` up to where the container opened at ``start`` closes, without its
    trailing commas: the repaired text, the removed commas' offsets in ``text`` and the offset
    the walk stopped at.

    Strings are read from ``start``, so a comma or bracket inside one is never touched, whatever
    quotes the text holds before ``start``.
    """
    removed: list[int] = []
    depth = 0
    stop = len(text)
    for token in _REPAIR_TOKEN.finditer(text, start):
        kind = token.group()[0]
        if kind == ",":
            removed.append(token.start())
        elif kind in "{[":
            depth += 1
        elif kind in "}]":
            depth -= 1
            if depth <= 0:
                stop = token.end()
                break
    pieces, last = [], start
    for at in removed:
        pieces.append(text[last:at])
        last = at + 1
    pieces.append(text[last:stop])
    return "".join(pieces), removed, stop


def _scan(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text``, left to right (nested objects are not repeated).

    An object that does not decode as written is tried once more without its trailing commas
    (``{"a": 1,}``).
    """
    found: list[dict[str, Any]] = []
    failures = work = 0
    i = text.find("{")
    while i != -1 and failures < _MAX_FAILED_STARTS and work < _MAX_FAILED_WORK:
        try:
            obj, end = _DECODER.raw_decode(text, i)
        except (ValueError, RecursionError) as exc:
            pos = getattr(exc, "pos", len(text))
            work += max(1, pos - i)  # how far the failed attempt read
            repaired = _decode_repaired(text, i) if _at_trailing_comma(text, pos) else None
            if repaired is None:
                failures += 1
                i = text.find("{", i + 1)
                continue
            obj, end, read = repaired
            work += read
        if isinstance(obj, dict):
            found.append(obj)
            i = text.find("{", end)
        else:  # pragma: no cover - raw_decode at "{" only returns objects
            i = text.find("{", i + 1)
    return found


def _at_trailing_comma(text: str, pos: int) -> bool:
    """Whether a decode that failed at ``pos`` failed on a container closing after a comma."""
    if text[pos : pos + 1] not in ("}", "]"):
        return False
    before = pos - 1
    while before >= 0 and text[before].isspace():
        before -= 1
    return before >= 0 and text[before] == ","


def _decode_repaired(text: str, start: int) -> tuple[Any, int, int] | None:
    """The object opened at ``start`` read without its trailing commas, with its end offset in
    ``text`` and the characters the repair read; None when there were none to drop or it still
    does not decode."""
    fixed, removed, stop = _drop_trailing_commas(text, start)
    if not removed:
        return None
    try:
        obj, end = _DECODER.raw_decode(fixed, 0)
    except (ValueError, RecursionError):
        return None
    at_text = start + end  # the end in ``text``: step over each dropped comma before it
    for at in removed:
        if at >= at_text:
            break
        at_text += 1
    return obj, at_text, stop - start


def extract_json(text: str) -> dict[str, Any]:
    """The JSON object a reply carries: the whole reply, else the last fenced block holding an
    object, else the last well-formed top-level object in the text.

    Raises :class:`~ragmeter.errors.JudgeParseError` when there is none.
    """
    if not isinstance(text, str):
        raise JudgeParseError(f"expected the reply as text, got {type(text).__name__}", raw=repr(text))
    body = text[:_MAX_REPLY].strip()
    try:
        whole = _loads_lenient(body)
    except (ValueError, RecursionError):
        whole = None
    if isinstance(whole, dict):
        return whole
    for match in reversed(list(_FENCE.finditer(body))):
        objs = _scan(match.group(2))
        if objs:
            return objs[-1]
    objs = _scan(body)
    if objs:
        return objs[-1]
    raise JudgeParseError(
        f"the judge's reply holds no JSON object: {_excerpt(text)}",
        raw=text,
        validation="no JSON object found",
    )


def parse_reply(text: str, schema: type[T]) -> T:
    """Extract the reply's JSON object and validate it against ``schema``.

    Raises :class:`~ragmeter.errors.JudgeParseError` (and nothing else) when the reply holds no
    JSON object or the object does not validate; ``.validation`` says what failed.
    """
    if isinstance(text, str) and text[:1] == "{" and len(text) <= _MAX_REPLY:
        try:  # the common case, a bare JSON object: parsed and validated in one step by pydantic-core
            return schema.model_validate_json(text)
        except ValidationError:
            pass  # not bare JSON, or invalid: the tolerant path below says which
        except (ValueError, TypeError, RecursionError):
            pass
    obj = extract_json(text)
    try:
        return schema.model_validate(obj)
    except ValidationError as exc:
        detail = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
        )
        raise JudgeParseError(
            f"the judge's JSON does not match {schema.__name__}: {detail}. Reply: {_excerpt(text)}",
            raw=text,
            validation=detail,
        ) from None
    except (ValueError, TypeError, RecursionError) as exc:  # a validator that raised oddly
        raise JudgeParseError(
            f"the judge's JSON does not match {schema.__name__}: {exc}", raw=text, validation=str(exc)
        ) from None


def _excerpt(text: str, limit: int = 200) -> str:
    text = text if isinstance(text, str) else repr(text)
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")


def length_repair_note(max_tokens: int | None) -> str:
    """The note a repair adds to the request's last user message when the reply hit the token limit.

    A reply cut at the limit (``finish_reason == "length"``) is asked again from the start rather
    than shown back to the judge: a small judge cuts there mostly because it looped on one
    sentence, and shown that loop it writes it again (measured: 4 of 24 passage_recall replies of
    the 1.5B judge under greedy decoding, each repair looping to the limit too).
    """
    limit = f"the {max_tokens}-token limit" if max_tokens else "the length limit"
    return (
        f"Your previous reply was cut at {limit} before its JSON object was complete. "
        "Reply again with only the JSON object: keep every text field to one or two short "
        "sentences and never repeat a sentence."
    )


def repair_message(error: JudgeParseError, schema: type[BaseModel]) -> str:
    """The follow-up user message asking the judge to fix an unparseable reply."""
    return (
        "Your previous reply could not be read: "
        f"{error.validation or 'no JSON object found'}.\n"
        "Reply again with only one JSON object, no prose and no code fence, that follows this JSON "
        f"schema:\n{json.dumps(schema.model_json_schema(), ensure_ascii=False)}"
    )
