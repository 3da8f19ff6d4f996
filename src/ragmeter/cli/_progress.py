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
* **Judged runs** count the judge calls answered against the planned total (``calls``: a function
  giving ``(answered, planned, asked, exact)``, planned None while unknown, asked the calls sent or
  queued so far, exact False for an estimate, shown ``~``). The run driver plans the calls of each
  chunk before its first call (:class:`~ragmeter.engines.driver.CallPlan`), cached calls included,
  so the line shows ``judge 10/50 calls`` and an ETA from the first answered calls on. The ETA
  is the calls left over the current call rate (:class:`CallRate`: the calls answered over the
  most recent stretch of at least :data:`RECENT_CALLS` calls and :data:`RECENT_SECONDS` seconds,
  within the last :data:`RATE_WINDOW` seconds; early on, over the time since the judge got its
  first call, so the time spent loading data and models before does not count). A recent rate,
  not the average since the start: the judge's adaptive concurrency ramps up (or backs off)
  during a run, and the rate of its first seconds says little about the rest. It moves while rows
  are still in flight; rows are counted as they finish. Once every row is done the line shows the
  calls made (``judge 9 calls``: an expected plan may have said ~10) and ETA 0. The judge's other
  counters (cache hits, errors, tokens, cost) follow when the width allows.
* **One line** at any width >= 60 columns (:meth:`RunProgress.line`): the parts that do not fit
  are left out, least useful first (the judge's counters, elapsed time, rates, the percentage);
  rows, calls and the ETA stay.
* **Not a terminal** (a CI log, a file): no bar and no control codes; one plain line every
  :data:`LOG_INTERVAL` seconds at most (``evaluating: 2,048/100,000 rows (2%), 812 rows/s,
  elapsed 0:00:03, ETA 0:02:01``), none for a run that ends sooner. ``-q`` prints nothing.
"""

from __future__ import annotations

import os
import re
import time
from collections import deque
from collections.abc import Callable
from datetime import timedelta
from typing import IO, Any

from rich.console import Console
from rich.progress import Progress, ProgressColumn, SpinnerColumn, Task
from rich.text import Text

#: Seconds between two plain progress lines when stderr is not a terminal.
LOG_INTERVAL = 30.0
#: Seconds of answered judge calls the call rate looks back at most (:class:`CallRate`).
RATE_WINDOW = 60.0
#: The call rate is measured over the most recent stretch holding at least this many answered calls...
RECENT_CALLS = 8
#: ... and lasting at least this many seconds (several round trips of a judge answering in waves).
RECENT_SECONDS = 2.0
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
    from ..io.readers import input_format

    try:
        fmt = input_format(path, format)
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


class CallRate:
    """Judge calls answered per second, now, from ``(time, answered, asked)`` observations.

    Each count of answered calls is kept with the time it was first seen (so a burst of calls
    answered together, as a judge with several requests in flight answers them, starts at its
    moment). The rate is the calls answered between the latest kept count that lies at least
    ``recent_calls`` calls and ``recent_seconds`` seconds back and the last count, over the time
    between them; with no such count yet, over the time since the judge's first call
    (observations before it had any call, ``asked`` 0, are not kept: reading the data and loading
    models is not judge time). Counts older than ``window`` seconds are dropped. When no call has
    been answered for longer than that stretch lasted, the time since the last answer is the
    divisor instead, so a stalled judge shows a falling rate. None until a call has been answered.

    >>> r = CallRate(window=60)
    >>> r.observe(0.0, 0, 0); r.observe(5.0, 0, 8); r.observe(15.0, 20, 28); r.observe(25.0, 40, 48)
    >>> r.rate()
    2.0
    >>> r.observe(26.0, 48, 56); r.observe(27.0, 56, 64)  # four times faster: the rate follows
    >>> r.rate()
    8.0
    """

    def __init__(self, window: float = RATE_WINDOW, *, recent_calls: int = RECENT_CALLS,
                 recent_seconds: float = RECENT_SECONDS) -> None:
        self.window, self.recent_calls, self.recent_seconds = window, recent_calls, recent_seconds
        #: ``(time first seen, answered)`` per count, oldest first
        self.points: deque[tuple[float, int]] = deque()
        self.now: float | None = None

    def observe(self, t: float, answered: int, asked: int | None = None) -> None:
        """Record that ``answered`` calls had been answered (of ``asked`` sent or queued; None: not
        known, taken as ``answered``) at time ``t``."""
        if not (asked if asked is not None else answered):
            return  # the judge has no call yet
        if self.points and answered < self.points[-1][1]:  # a new count (another run): start again
            self.points.clear()
        self.now = t
        if not self.points or answered > self.points[-1][1]:
            self.points.append((t, answered))
        while len(self.points) > 2 and self.points[1][0] <= t - self.window:
            self.points.popleft()

    def rate(self) -> float | None:
        """Calls answered per second (None before the first answered call)."""
        if len(self.points) < 2 or self.now is None:
            return None
        t1, a1 = self.points[-1]
        t0, a0 = self.points[0]
        for t, a in reversed(self.points):
            if a1 - a >= self.recent_calls and t1 - t >= self.recent_seconds:
                t0, a0 = t, a
                break
        span = max(t1 - t0, self.now - t1)
        return (a1 - a0) / span if span > 0 and a1 > a0 else None


class LineColumn(ProgressColumn):
    """The whole progress as one line (:meth:`RunProgress.line`) at the console's width."""

    def __init__(self, progress: RunProgress) -> None:
        super().__init__()
        self.run = progress

    def render(self, task: Task) -> Text:
        """The line, fitted to the console's width less the spinner."""
        return Text(self.run.line(width=self.run.console.width - 3), no_wrap=True, overflow="ellipsis")


def _clock(seconds: float | None) -> str:
    """``0:02:01`` (``-:--:--`` when unknown)."""
    return "-:--:--" if seconds is None else str(timedelta(seconds=max(int(seconds), 0)))


def _join_fitting(parts: list[tuple[str, int]], width: int | None) -> str:
    """The parts' texts joined with ``, `` (a percentage right after the rows with a space), leaving
    out the lowest-priority parts until the line is at most ``width`` columns (None: all)."""
    keep = list(parts)

    def joined(items: list[tuple[str, int]]) -> str:
        out = ""
        for text, _ in items:
            out += (" " if text.startswith("(") else ", ") + text if out else text
        return out

    while width is not None and len(joined(keep)) > width and len(keep) > 1:
        keep.remove(min(keep, key=lambda p: p[1]))
    return joined(keep)


class RunProgress:
    """The progress of one run: a rich bar on a terminal, a plain line every ``interval`` seconds
    elsewhere, nothing with ``quiet``. Use as a context manager; :meth:`advance` is the engines'
    ``progress`` callback (called with the rows finished).

    ``calls``: a function giving the judge calls ``(answered, planned, asked, exact)`` (planned
    None while unknown; the first two or three are accepted too), for a judged run; ``status``: a function
    giving the judge's other counters (shown when the width allows). ``get_time`` is the clock
    (tests). ``extra`` is accepted for callers that pass more columns, and ignored: the display is
    one line. ``label`` and ``unit`` word the line (``evaluating: 12/50 rows``).
    """

    def __init__(self, console: Console, *, total: int | None, quiet: bool = False,
                 extra: tuple[ProgressColumn, ...] = (), status: Callable[[], str] | None = None,
                 interval: float = LOG_INTERVAL, get_time: Callable[[], float] | None = None,
                 log: IO[str] | None = None,
                 calls: Callable[[], tuple[int, int | None, *tuple[int, ...]]] | None = None,
                 label: str = "evaluating", unit: str = "rows") -> None:
        self.console = console
        self.label, self.unit = label, unit
        self.live = not quiet and console.is_terminal
        self.log = None if quiet or self.live else (log or console.file)
        self.status, self.interval, self.calls = status, interval, calls
        self.get_time = get_time or time.monotonic
        self.call_rate = CallRate()
        self.progress = Progress(SpinnerColumn(), LineColumn(self), console=console, transient=True,
                                 disable=not self.live, get_time=self.get_time)
        self.task = self.progress.add_task("eval", total=total)
        self._last_line = self.get_time()
        if calls is not None:
            self._observe()

    def _observe(self) -> tuple[int, int | None]:
        """Read the judge's calls, record them in :attr:`call_rate`, return ``(answered, planned)``."""
        assert self.calls is not None
        got = self.calls()
        answered, planned = got[0], got[1]
        self.call_rate.observe(self.get_time(), answered, got[2] if len(got) > 2 else None)
        return answered, planned

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

    def done(self) -> bool:
        """Whether every row of a known total has finished (the judge's calls with them)."""
        task = self.progress.tasks[0]
        return task.total is not None and 0 < task.total <= task.completed

    def eta(self) -> float | None:
        """Seconds left: none once every row is done; the calls left over the call rate when the
        planned calls are known and a call has been answered; else the rows left over the row
        rate (:func:`time_remaining`)."""
        if self.done():
            return 0.0
        if self.calls is not None:
            answered, planned = self._observe()
            rate = self.call_rate.rate()
            if planned is not None and rate:
                return max(planned - answered, 0) / rate
        return time_remaining(self.progress.tasks[0])

    def line(self, width: int | None = None) -> str:
        """The progress as one line (what a CI log gets, and the terminal's display), at most
        ``width`` columns when given (>= 60; the parts that do not fit are left out, see the module
        docstring), e.g. ``evaluating: 12/50 rows (24%), judge 240/1,000 calls, 4.1 calls/s,
        2 rows/s, elapsed 0:00:58, ETA 0:03:05, judge: ...``."""
        task = self.progress.tasks[0]
        eta = self.eta()
        done = f"{self.label}: {task.completed:,.0f}" + (f"/{task.total:,.0f}" if task.total else "") + f" {self.unit}"
        # (text, priority): the lower the priority, the sooner a part is left out to fit
        parts: list[tuple[str, int]] = [(done, 9)]
        if task.total:
            parts.append((f"({task.percentage:.0f}%)", 3))
        if self.calls is not None:
            got = self.calls()
            answered, planned = got[:2]
            about = "~" if len(got) > 3 and not got[3] else ""
            if self.done():  # the calls made are the run's calls, whatever the plan expected
                planned = None
            parts.append((f"judge {answered:,}" + (f"/{about}{planned:,}" if planned is not None else "") + " calls",
                          8))
            rate = self.call_rate.rate()
            parts.append((f"{rate:,.1f} calls/s" if rate else "- calls/s", 4))
        rate = speed(task)
        parts.append((f"{rate:,.0f} {self.unit}/s" if rate else f"- {self.unit}/s", 2))
        parts.append((f"elapsed {_clock(task.elapsed)}", 1))
        if task.total or eta is not None:
            parts.append((f"ETA {_clock(eta)}", 7))
        if self.status is not None:
            parts.append((self.status(), 0))
        return _join_fitting(parts, width)

