"""Prompt files and the reply skeletons shown in them (one job: what the judge reads).

Every judged step's prompt is a versioned template file ``prompts/<name>.prompt`` beside the
metrics (:class:`ragmeter.judges.PromptTemplate`); its version is part of every cache key. The
reply model a prompt is answered with is declared in the module whose step function loads the
prompt (``_answer_steps``, ``_claim_steps``, ``_chunk_steps`` or the metric module itself).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from ...judges import PromptTemplate, ReplyShape
from ...types import Sample

PROMPTS = Path(__file__).with_name("prompts")


@cache
def template(name: str) -> PromptTemplate:
    """The versioned prompt template ``prompts/<name>.prompt``."""
    return PromptTemplate.from_file(PROMPTS / f"{name}.prompt")


def prompt_versions() -> dict[str, str]:
    """``{prompt name: version}`` of every bundled judge prompt template (judge-check records them:
    a changed prompt makes an older check stale)."""
    return {p.stem: str(template(p.stem).version) for p in sorted(PROMPTS.glob("*.prompt"))}


def reply_shape(key: str, entries: Sequence[dict[str, Any]]) -> ReplyShape:
    """The reply skeleton ``{key: [entry, ...]}``, one entry per item (see :class:`ReplyShape`).

    Entries name items by number only and hold ``<...>`` slots: no evaluated text (a claim, a
    passage's opening words) is ever copied into the skeleton, which sits in the instruction part
    of the prompt; the items themselves are shown inside their data tags.
    """
    return ReplyShape(json.dumps({key: list(entries)}, ensure_ascii=False))


def numbered(items: Sequence[str]) -> str:
    """``1. a\\n2. b`` (how claims and passages are shown to the judge)."""
    return "\n".join(f"{i}. {' '.join(t.split())}" for i, t in enumerate(items, start=1))


def joined_context(sample: Sample) -> str:
    """The retrieved contexts' texts, joined as the evidence claims are checked against."""
    return "\n\n".join(t for t in sample.context_texts if t.strip())
