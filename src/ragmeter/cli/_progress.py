"""The progress display of ``ragmeter eval``: rows done of the total, rate, elapsed time and ETA.

Rules:

* **A total known cheaply, before the run.** :func:`count_rows` reads it from a Parquet file's
  metadata (no row is read), or counts the lines of a JSONL / CSV file with a byte scan (1 MiB
  binary blocks, ``bytes.count``: a 100,000-row JSONL file costs a few milliseconds, measured in
  ``tests/cli/test_progress_cli.py``). A gzip-compressed file or a JSON array has no cheap
  count: the bar then shows rows and rate without a total or an ETA. A CSV field with a line
  break inside quotes makes the count an over-estimate; when the run ends the total is set to the
  rows done, so the bar never ends short.
* **ETA.** The rows left over the rate: rich's recent rate (the last 30 s of updates), or the
  average since the start after the first update (an engine reporting 16,384-row batches).
* **Judged runs** show the judge's counters (finished calls, cache hits, errors, tokens, cost)
  beside the bar (:class:`~ragmeter.cli.eval_cmd.JudgeColumn`), updated at every refresh.
* **Not a terminal** (a CI log, a file): no bar and no control codes; one plain line every
  :data:`LOG_INTERVAL` seconds at most (``evaluating: 2,048/100,000 rows (2%), 812 rows/s,
  elapsed 0:00:03, ETA 0:02:01``), none for a run that ends sooner. ``-q`` prints nothing.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from datetime import timedelta
from typing import IO, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

#: Seconds between two plain progress lines when stderr is not a terminal.
LOG_INTERVAL = 30.0
#: Bytes read per block by :func:`count_lines`.
BLOCK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_EMPTY_LINE = re.compile(rb"(?<=\n)\n")


def count_lines(path: str | os.PathLike[str]) -> int:
    """The non-empty lines of a text file, counted on its bytes: newlines, minus empty lines (a
    newline right after a newline, also across two blocks, or at the start), plus a last line
    without a final newline. A line of spaces counts as a line (the total is then an over-estimate).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.jsonl"
    >>> _ = p.write_bytes(b'\\n{"a": 1}\\n\\n\\n{"a": 2}\\n{"a": 3}')
    >>> count_lines(p)
    3
    """
    lines = empty = 0
    prev = b"\n"  # a file that starts with a newline starts with an empty line
    with open(path, "rb") as fh:
        while block := fh.read(BLOCK):
            lines += block.count(b"\n")
            if b"\n\n" in block:  # rare: count every newline that follows a newline (overlapping)
                empty += len(_EMPTY_LINE.findall(block))
            empty += prev == b"\n" and block[:1] == b"\n"
            prev = block[-1:]
    return lines - empty + (prev not in (b"\n", b""))


def count_rows(path: str | os.PathLike[str], format: str | None = None) -> int | None:
    """The rows of a data file, known cheaply (see the module docstring), or None when they are not:
    Parquet from its metadata, JSONL from its lines, CSV from its lines less the header; None for a
    gzip-compressed file, a JSON array, or a file that cannot be read (the run then reports that)."""
    from ..errors import RagmeterError
    from ..io import detect_format

    try:
        fmt = detect_format(path, format)
        with open(path, "rb") as fh:
            if fh.read(2) == _GZIP_MAGIC:
                return None
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(path).metadata.num_rows)
        if fmt == "jsonl":
            return count_lines(path)
        if fmt == "csv":
            return max(count_lines(path) - 1, 0)
    except (OSError, RagmeterError, ImportError, ValueError):
        return None
    except Exception:  # pyarrow's own errors on a damaged file: the run reports them, not the count
        return None
    return None


def speed(task: Task) -> float | None:
    """Rows per second: rich's recent rate (over the updates of the last 30 s after the first),
    else, after a single update (an engine that reports large batches), the rows over the time
    since the start; None before any row."""
    if task.finished_speed or task.speed:
        return task.finished_speed or task.speed
    if task.completed and task.elapsed:
        return task.completed / task.elapsed
    return None


def time_remaining(task: Task) -> float | None:
    """Seconds left at :func:`speed` (None without a total or a rate)."""
    rate = speed(task)
    if task.total is None or not rate:
        return None
    return max(task.total - task.completed, 0) / rate


class RateColumn(ProgressColumn):
    """Rows per second (:func:`speed`)."""

    def render(self, task: Task) -> Text:
        """``1,234 rows/s`` (``- rows/s`` before the first rows)."""
        rate = speed(task)
        return Text(f"{rate:,.0f} rows/s" if rate else "- rows/s", style="progress.data.speed")


class EtaColumn(ProgressColumn):
    """``ETA 0:02:01`` (:func:`time_remaining`; ``ETA -:--:--`` before it is known)."""

    def render(self, task: Task) -> Text:
        """The time left."""
        return Text(f"ETA {_clock(time_remaining(task))}", style="progress.remaining")


class RowsColumn(ProgressColumn):
    """``done/total rows`` (``done rows`` when the total is not known)."""

    def render(self, task: Task) -> Text:
        """The count of rows done, of the total."""
        total = f"/{task.total:,.0f}" if task.total is not None else ""
        return Text(f"{task.completed:,.0f}{total} rows", style="progress.download")


def _clock(seconds: float | None) -> str:
    """``0:02:01`` (``-:--:--`` when unknown)."""
    return "-:--:--" if seconds is None else str(timedelta(seconds=max(int(seconds), 0)))


class RunProgress:
    """The progress of one run: a rich bar on a terminal, a plain line every ``interval`` seconds
    elsewhere, nothing with ``quiet``. Use as a context manager; :meth:`advance` is the engines'
    ``progress`` callback (called with the rows finished).

    ``extra``: more columns for the bar (the judge's counters); ``status``: a function giving one
    more text for the plain line (the judge's counters there). ``get_time`` is the clock (tests).
    """

    def __init__(self, console: Console, *, total: int | None, quiet: bool = False,
                 extra: tuple[ProgressColumn, ...] = (), status: Callable[[], str] | None = None,
                 interval: float = LOG_INTERVAL, get_time: Callable[[], float] | None = None,
                 log: IO[str] | None = None) -> None:
        self.console = console
        self.live = not quiet and console.is_terminal
        self.log = None if quiet or self.live else (log or console.file)
        self.status, self.interval = status, interval
        self.get_time = get_time or time.monotonic
        self.progress = Progress(
            SpinnerColumn(), TextColumn("evaluating"), BarColumn(bar_width=24), RowsColumn(),
            TextColumn("[progress.percentage]{task.percentage:>3.0f}%"), RateColumn(), TimeElapsedColumn(),
            EtaColumn(), *extra,
            console=console, transient=True, disable=not self.live, get_time=self.get_time,
        )
        self.task = self.progress.add_task("eval", total=total)
        self._last_line = self.get_time()

    def __enter__(self) -> RunProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def advance(self, rows: int) -> None:
        """Count ``rows`` more rows done (an over-estimated total is lowered to the rows done at
        :meth:`finish`); off a terminal, print a line when ``interval`` seconds have passed."""
        self.progress.advance(self.task, rows)
        if self.log is not None and self.get_time() - self._last_line >= self.interval:
            self._last_line = self.get_time()
            print(self.line(), file=self.log, flush=True)

    def finish(self) -> None:
        """The run has ended: the total becomes the rows done (a CSV's line count may have been more)."""
        task = self.progress.tasks[0]
        self.progress.update(self.task, total=task.completed)

    def line(self) -> str:
        """The plain progress line (what a CI log gets)."""
        task = self.progress.tasks[0]
        done = f"{task.completed:,.0f}"
        if task.total:
            done += f"/{task.total:,.0f} rows ({task.percentage:.0f}%)"
        else:
            done += " rows"
        rate = speed(task)
        parts = [f"evaluating: {done}", f"{rate:,.0f} rows/s" if rate else "- rows/s",
                 f"elapsed {_clock(task.elapsed)}"]
        if task.total:
            parts.append(f"ETA {_clock(time_remaining(task))}")
        if self.status is not None:
            parts.append(self.status())
        return ", ".join(parts)

