"""A toy RAG app over the Nimbus Backup documentation, for `ragmeter run`.

Retrieval: the chunks of ``rag_samples.jsonl`` ranked by words shared with the question;
generation: the first sentence of the top chunk. ``top_k`` is an app parameter::

    PYTHONPATH=examples ragmeter run nimbus_app:answer --questions examples/rag_samples.jsonl \\
        -m mrr -m recall@3 -m token_f1 --param top_k=1,3 -o out-run/
"""

from __future__ import annotations

import json
import re
from pathlib import Path

_WORD = re.compile(r"[a-z0-9]+")


def _chunks() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (Path(__file__).parent / "rag_samples.jsonl").read_text(encoding="utf-8").splitlines():
        for c in json.loads(line).get("contexts") or []:
            if isinstance(c, dict) and c.get("id") and c.get("text"):
                out[c["id"]] = c["text"]
    return out


CHUNKS = _chunks()


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def answer(question: str, top_k: int = 3) -> dict:
    """The answer and the ``top_k`` retrieved chunks (with their source page as metadata)."""
    q = _words(question)
    ranked = sorted(CHUNKS, key=lambda cid: (-len(q & _words(CHUNKS[cid])), cid))[:top_k]
    contexts = [{"id": cid, "text": CHUNKS[cid], "source": cid.rsplit("-", 1)[0]} for cid in ranked]
    first = contexts[0]["text"].split(". ")[0].rstrip(".") + "." if contexts else "I don't know."
    return {"answer": first, "contexts": contexts}
