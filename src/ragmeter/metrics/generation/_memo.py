"""The single-flight memo that lets several metrics share one judge step on the same sample.

A step (``analyse_answer``, ``verify_claims``, ``rate_chunks``...) is computed once per
(judge, event loop, step, content): concurrent callers await the same task. The memo is held per
judge object (weakly, so it goes with the judge) and bounded (:data:`MEMO_SIZE` entries per
judge, least recently used dropped first). A failed step is not memoised, so each metric records
its own error and a retry can succeed. The judge's own cache (on disk) is separate: it keeps
replies across runs; this memo only removes duplicate requests within a run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any
from weakref import WeakKeyDictionary

from ._base import collecting_notes, note

_MEMO: WeakKeyDictionary[Any, OrderedDict[tuple[Any, ...], asyncio.Future[tuple[Any, list[str]]]]] = WeakKeyDictionary()
#: most memoised steps kept per judge
MEMO_SIZE = 20_000


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, default=str).encode()).hexdigest()[:32]


async def shared(judge: Any, step: str, content: tuple[Any, ...], compute: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``compute`` once per (judge, loop, step, content); concurrent callers await the same task.

    A failed step is not memoised, so each metric records its own error and a retry can succeed.
    The notes the step said (:func:`._base.note`) are said again to every caller.
    """
    loop = asyncio.get_running_loop()
    memo = _MEMO.setdefault(judge, OrderedDict())
    key = (id(loop), step, _digest(*content))
    fut = memo.get(key)
    if fut is None or (fut.done() and fut.exception() is not None):
        fut = asyncio.ensure_future(collecting_notes(compute()), loop=loop)
        memo[key] = fut
        while len(memo) > MEMO_SIZE:
            memo.popitem(last=False)
    else:
        memo.move_to_end(key)
    value, notes = await fut
    for text in notes:
        note(text)
    return value
