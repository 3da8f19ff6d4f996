"""How much of each judge prompt the server reused from the previous one, read from its log.

A llama.cpp-based server keeps the computed state of the last prompt in its slot and evaluates
only what follows the longest prefix the next prompt shares with it. llama-cpp-python's server
(the one ``bench/judges/fetch_qwen.sh serve`` starts; its log is ``$RAGMETER_JUDGE_HOME/logs/server.log``)
writes one line per request::

    Llama.generate: 151 prefix-match hit, remaining 132 prompt tokens to eval

so over a run the share of prompt tokens reused is

.. math:: \\text{reused} = \\frac{\\sum_r h_r}{\\sum_r (h_r + e_r)}

with :math:`h_r` the prefix-match hit and :math:`e_r` the tokens evaluated for request :math:`r`.
A request whose prompt is wholly the previous one's is logged by some versions without the line;
the count of lines is given so a reader can compare it with the requests sent.

After each request the server prints llama.cpp's own timings::

    llama_perf_context_print: prompt eval time =   17114.65 ms /   485 tokens (...)
    llama_perf_context_print:        eval time =    4582.63 ms /    49 runs   (...)

summed as ``prompt_ms`` and ``generated_tokens``/``generate_ms``: where a request's time goes, read
by the server (the log-softmax llama-cpp-python computes in Python for log-probabilities is in
neither; see ``bench/logprob_cost.py``).

Usage: ``python bench/prompt_reuse.py SERVER_LOG`` (the whole log), or in a bench:
``mark = LogMark(path)`` before the run and ``mark.since()`` after it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_LINE = re.compile(rb"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")
_PROMPT = re.compile(rb"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
_GENERATE = re.compile(rb"llama_perf_context_print:\s+eval time =\s*([\d.]+) ms /\s*(\d+) runs")


def reuse_of(text: bytes) -> dict[str, Any]:
    """``{"requests", "reused_tokens", "evaluated_tokens", "reused_share", "prompt_ms",
    "generated_tokens", "generate_ms"}`` of the log lines in ``text`` (``reused_share`` None when no
    line was found; the server's timings summed over its timing lines)."""
    hits = [(int(a), int(b)) for a, b in _LINE.findall(text)]
    reused, evaluated = sum(h for h, _ in hits), sum(e for _, e in hits)
    total = reused + evaluated
    generated = _GENERATE.findall(text)
    return {"requests": len(hits), "reused_tokens": reused, "evaluated_tokens": evaluated,
            "reused_share": round(reused / total, 4) if total else None,
            "prompt_ms": round(sum(float(ms) for ms, _ in _PROMPT.findall(text)), 2),
            "generated_tokens": sum(int(n) for _, n in generated),
            "generate_ms": round(sum(float(ms) for ms, _ in generated), 2)}


@dataclass
class LogMark:
    """A position in a server log; :meth:`since` reads what was appended after it."""

    path: Path
    offset: int = 0

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def since(self) -> dict[str, Any]:
        """:func:`reuse_of` the log lines written since the mark (and moves the mark there)."""
        with self.path.open("rb") as fh:
            fh.seek(self.offset)
            text = fh.read()
        self.offset += len(text)
        return reuse_of(text)


if __name__ == "__main__":
    print(reuse_of(Path(sys.argv[1]).read_bytes()))
