"""Retrieved documents as RAG frameworks hand them out, read as ragmeter contexts.

:func:`context_record` turns one retrieved item into the plain ``{id, text, score, metadata}``
mapping a :class:`~ragmeter.types.Context` is built from. Duck-typed on attribute names (none of
the frameworks is imported here), so it costs nothing when they are not installed:

=====================================================  ===========================================
given                                                  read as
=====================================================  ===========================================
LangChain ``Document``                                 ``page_content`` -> text, ``id``,
                                                       ``metadata``
LlamaIndex ``NodeWithScore``                           its ``node`` as below, ``score``
LlamaIndex ``TextNode`` (any ``BaseNode``)             ``get_content()`` -> text, ``node_id`` ->
                                                       id, ``metadata``
Haystack ``Document``                                  ``content`` -> text, ``id``, ``score``,
                                                       ``meta`` -> metadata
a mapping with ``page_content`` (a LangChain           as the object (``content`` -> text; the
document's ``model_dump()``) or ``content`` (a         vectors ``embedding``, ``sparse_embedding``
Haystack document's ``to_dict()``) and no ``text``     and ``blob`` left out)
=====================================================  ===========================================

Anything else is returned as it is (a string, a plain mapping), for the caller's own rules.
A leaf module: it imports nothing of ragmeter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["VECTOR_KEYS", "context_record", "framework_kind"]

#: Keys of a serialised document that hold its vectors or raw bytes: not kept as metadata.
VECTOR_KEYS = frozenset({"embedding", "sparse_embedding", "blob"})


def framework_kind(obj: Any) -> str | None:
    """``"langchain"``, ``"llamaindex-scored"``, ``"llamaindex"`` or ``"haystack"`` for an object
    shaped like one of those frameworks' retrieved documents; None for anything else (a string,
    a mapping, a class)."""
    if isinstance(obj, str | bytes | Mapping | type) or obj is None:
        return None
    if hasattr(obj, "page_content") and hasattr(obj, "metadata"):
        return "langchain"
    if hasattr(obj, "node") and hasattr(obj, "score") and framework_kind(obj.node) == "llamaindex":
        return "llamaindex-scored"
    if hasattr(obj, "get_content") and hasattr(obj, "node_id") and hasattr(obj, "metadata"):
        return "llamaindex"
    if hasattr(obj, "content") and hasattr(obj, "meta") and hasattr(obj, "id"):
        return "haystack"
    return None


def _meta(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _text(value: Any) -> Any:
    return value if value is None or isinstance(value, str) else str(value)


def context_record(obj: Any) -> Any:
    """The ``{id, text, score, metadata}`` mapping of a framework document (None values left out),
    the mapping of a dict in a framework's serialised shape, or ``obj`` as it is."""
    if isinstance(obj, Mapping):
        return _mapping_record(obj)
    kind = framework_kind(obj)
    if kind is None:
        return obj
    if kind == "langchain":
        out = {"id": getattr(obj, "id", None), "text": _text(obj.page_content), "metadata": _meta(obj.metadata)}
    elif kind == "llamaindex-scored":
        out = {**context_record(obj.node), "score": obj.score}
    elif kind == "llamaindex":
        out = {"id": obj.node_id, "text": _text(obj.get_content()), "metadata": _meta(obj.metadata)}
    else:  # haystack
        out = {"id": obj.id, "text": _text(obj.content), "score": getattr(obj, "score", None),
               "metadata": _meta(obj.meta)}
    return {k: v for k, v in out.items() if v is not None and v != {}}


def _mapping_record(obj: Mapping[Any, Any]) -> Any:
    """A dict in LangChain's (``page_content``) or Haystack's (``content`` + ``meta``) shape as
    ragmeter's keys; any other mapping as it is."""
    if "text" in obj:
        return obj
    if "page_content" in obj:
        rest = {k: v for k, v in obj.items() if k not in ("page_content", "type")}
        return {**rest, "text": obj["page_content"]}
    if "content" in obj:
        rest = {k: v for k, v in obj.items() if k not in ("content", "meta") and k not in VECTOR_KEYS}
        meta = {**_meta(obj.get("meta")), **_meta(rest.get("metadata"))}
        return {**rest, "text": obj["content"], **({"metadata": meta} if meta else {})}
    return obj
