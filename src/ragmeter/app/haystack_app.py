"""A Haystack ``Pipeline`` as the app under test (``pkg.module:pipeline``), read duck-typed: ragmeter
never imports Haystack.

**In.** Every input of the pipeline named ``query`` or ``question`` (a retriever's ``query``, a
prompt builder's ``question``) gets the question; every input named as a ``--param`` gets its value
(``--param top_k=3,5`` sets each ``top_k`` input, the retriever's). A parameter that no input has
is an error naming the pipeline's inputs, as is a pipeline with no ``query`` / ``question`` input.

**Out.** The pipeline runs in a worker thread with the outputs of every component kept
(``include_outputs_from``). The answer is the first reply of the last component that returned
``replies`` (a string, or a ``ChatMessage``'s text) or ``answers`` (a ``GeneratedAnswer``'s
``data``); the contexts are the ``documents`` of the last component that returned any (a ranker
after its retriever), in their order, read as every Haystack ``Document`` is
(:mod:`ragmeter.frameworks`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..errors import AppError

#: Pipeline inputs that receive the question.
QUESTION_INPUTS = ("query", "question")


def is_pipeline(obj: Any) -> bool:
    """True for a Haystack ``Pipeline`` (or an object shaped like one: ``run``, ``inputs``, ``graph``)."""
    return all(hasattr(obj, a) for a in ("run", "inputs", "graph")) and not isinstance(obj, type)


def pipeline_inputs(inputs: dict[str, dict[str, Any]], question: str, params: dict[str, Any]) -> dict[str, Any]:
    """The ``data`` of ``Pipeline.run``: the question and the parameters on the inputs named so."""
    data: dict[str, dict[str, Any]] = {}
    used: set[str] = set()
    for component, sockets in inputs.items():
        for socket in sockets:
            if socket in QUESTION_INPUTS:
                data.setdefault(component, {})[socket] = question
                used.add("")
            elif socket in params:
                data.setdefault(component, {})[socket] = params[socket]
                used.add(socket)
    listed = ", ".join(f"{c}.{s}" for c, sockets in inputs.items() for s in sockets) or "none"
    if "" not in used:
        raise AppError(f"the Haystack pipeline has no input named {' or '.join(QUESTION_INPUTS)} to take the "
                       f"question; its inputs: {listed}")
    unused = [p for p in params if p not in used]
    if unused:
        raise AppError(f"--param {', '.join(unused)}: no input of the Haystack pipeline has that name; its "
                       f"inputs: {listed}")
    return data


def _reply_text(reply: Any) -> Any:
    if isinstance(reply, str):
        return reply
    for attr in ("text", "data", "content"):  # ChatMessage.text, GeneratedAnswer.data
        value = getattr(reply, attr, None)
        if isinstance(value, str):
            return value
    return reply


def pipeline_output(result: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``{"answer", "contexts"}`` of a pipeline's result (see the module docstring)."""
    answer: Any = None
    contexts: list[Any] | None = None
    for outputs in result.values():
        if not isinstance(outputs, dict):
            continue
        replies = outputs.get("replies", outputs.get("answers"))
        if isinstance(replies, list) and replies:
            answer = _reply_text(replies[0])
        if isinstance(outputs.get("documents"), list):
            contexts = list(outputs["documents"])
    if answer is None:
        raise AppError(f"the Haystack pipeline returned no replies or answers (its outputs: "
                       f"{', '.join(f'{c}.{k}' for c, o in result.items() for k in o) or 'none'})")
    return {"answer": answer, "contexts": contexts if contexts is not None else []}


@dataclass
class HaystackApp:
    """A Haystack pipeline called with one question and the parameters (see the module docstring)."""

    spec: str
    pipeline: Any
    identity: str = ""

    def __post_init__(self) -> None:
        self.identity = self.identity or f"haystack:{self.spec}"

    async def call(self, question: str, params: dict[str, Any]) -> Any:
        data = pipeline_inputs(self.pipeline.inputs(), question, params)
        keep = set(self.pipeline.graph.nodes)
        result = await asyncio.to_thread(self.pipeline.run, data, include_outputs_from=keep)
        return pipeline_output(result)
