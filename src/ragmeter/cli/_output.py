"""What the CLI writes to stdout, so that it survives terminals, CI logs and pipes.

Rules:

* **Formats.** ``--format table`` is a rich table, ``markdown`` a GitHub-flavoured Markdown table
  (the same text :func:`ragmeter.gate.markdown` writes for ``--markdown`` and the job summary),
  ``json`` the summary as ``summary.json`` holds it. With no ``--format``, a terminal gets the
  table and anything else (a CI log, a pipe, a file) the Markdown table.
* **Fits the width, full numbers.** Everything printed to stdout fits the console's width: the
  terminal's, ``$COLUMNS`` when set, 80 columns in a pipe or a CI log (rich's rule). A rich table
  wraps its text cells at spaces (:func:`print_fitted`); a table that still does not fit is split
  into column groups, each repeating the first column, so no number is ever cut to ``0.67…``. A
  Markdown table too wide is split the same way and long lines are wrapped (:func:`fit_markdown`).
* **Closed pipes.** When the reader of stdout goes away (``ragmeter metrics | head -1``), the
  CLI stops writing to stdout (it is pointed at ``/dev/null``), finishes its work, and exits with
  the code that work gives: 0 for ``metrics``, the gate's code for ``eval`` (results, report and
  gate are never lost because the reader stopped early). No ``BrokenPipeError`` traceback, and
  no exit 120 from Python's final flush. We chose this over the shell's 141 so that
  ``set -o pipefail`` pipelines do not fail on a reader that stops early on purpose.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

from rich.cells import cell_len
from rich.console import Console, Group
from rich.table import Table

#: The stdout formats of ``ragmeter eval --format``.
FORMATS = ("table", "markdown", "json")


class StdoutConsole(Console):
    """A rich console for stdout whose closed pipe is not an exit: rich's own
    :meth:`~rich.console.Console.on_broken_pipe` exits with 1, which ``ragmeter eval`` reserves for
    a failed gate. This one goes quiet, detaches stdout and lets the command finish its work."""

    def on_broken_pipe(self) -> None:
        """Stop printing and point stdout at ``/dev/null`` (the reader has gone)."""
        self.quiet = True
        detach_stdout()


def stdout_format(fmt: str | None, *, as_json: bool = False, console: Console | None = None) -> str:
    """The format to print: ``fmt`` when given (``--json`` is ``json``), else ``table`` on a
    terminal and ``markdown`` anywhere else (CI logs, pipes, files)."""
    if as_json:
        return "json"
    if fmt:
        return fmt
    return "table" if (console or Console()).is_terminal else "markdown"


def print_fitted(console: Console, renderable: Any) -> None:
    """Print ``renderable`` within ``console.width``: a :class:`~rich.table.Table` through
    :func:`fit_table`, a :class:`~rich.console.Group` part by part, anything else as rich wraps it."""
    if isinstance(renderable, Group):
        for part in renderable.renderables:
            print_fitted(console, part)
    elif isinstance(renderable, Table):
        for table in fit_table(console, renderable):
            console.print(table)
    else:
        console.print(renderable)


def fit_table(console: Console, table: Table) -> list[Table]:
    """``table`` as tables that fit ``console.width`` with every cell whole: the table itself when
    its narrowest layout (text cells wrapped at spaces, each word and number whole) fits, else its
    columns split into groups that fit, each group a table repeating the first column."""
    width = console.width
    wide = console.options.update_width(10_000)  # rich clamps a measurement to the width it is given

    def needs(t: Table) -> int:
        return console.measure(t, options=wide).minimum

    if needs(table) <= width or len(table.columns) < 3:
        return [table]
    key, rest = 0, list(range(1, len(table.columns)))
    groups: list[list[int]] = [[]]
    for c in rest:
        trial = _sub_table(table, [key, *groups[-1], c], "")
        if groups[-1] and needs(trial) > width:
            groups.append([c])
        else:
            groups[-1].append(c)
    n = len(groups)
    return [_sub_table(table, [key, *g], f" ({i}/{n})") for i, g in enumerate(groups, 1)]


def _sub_table(table: Table, columns: list[int], suffix: str) -> Table:
    """A table of ``table``'s ``columns`` (by index), with the same headers, cells and styles."""
    title = f"{table.title}{suffix}" if isinstance(table.title, str) and table.title else table.title
    out = Table(title=title, show_header=table.show_header, box=table.box, show_lines=table.show_lines)
    cols = [table.columns[i] for i in columns]
    for col in cols:
        out.add_column(col.header, justify=col.justify, style=col.style, no_wrap=col.no_wrap,
                       overflow=col.overflow, min_width=col.min_width, max_width=col.max_width)
    for r, row in enumerate(table.rows):
        out.add_row(*(list(col.cells)[r] for col in cols), style=row.style)
    return out


_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _md_cells(line: str) -> list[str]:
    """The cells of a Markdown table line ``| a | b |``."""
    return [c.strip() for c in _CELL_SPLIT.split(line.strip())[1:-1]]


def _md_line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _split_md_table(lines: list[str], width: int) -> list[str]:
    """A Markdown table (header, rule, rows) as tables no wider than ``width`` where it can: its columns
    in groups, each repeating the first column, separated by a blank line (a single column wider than
    ``width`` stays whole)."""
    if max(cell_len(line) for line in lines) <= width:
        return lines
    rows = [_md_cells(line) for line in lines]
    ncol = len(rows[0])
    if ncol < 3 or any(len(r) != ncol for r in rows):
        return lines
    col_w = [max(cell_len(r[c]) for r in rows) for c in range(ncol)]

    def span(cols: list[int]) -> int:
        return sum(col_w[c] for c in cols) + 3 * len(cols) + 1

    groups: list[list[int]] = [[]]
    for c in range(1, ncol):
        if groups[-1] and span([0, *groups[-1], c]) > width:
            groups.append([])
        groups[-1].append(c)
    out: list[str] = []
    for g in groups:
        if out:
            out.append("")
        picked = [[r[0], *(r[c] for c in g)] for r in rows]
        out += [("|" + "|".join(cells) + "|") if k == 1 else _md_line(cells) for k, cells in enumerate(picked)]
    return out


_BULLET = re.compile(r"^(\s*(?:[-*+]|\d+\.)\s+)")


def _wrap_md_line(line: str, width: int) -> list[str]:
    """A long Markdown line wrapped at spaces (a list item's continuation lines indented under its
    text); headings, and words longer than ``width`` (paths, URLs), are kept whole."""
    if cell_len(line) <= width or line.lstrip().startswith("#"):
        return [line]
    m = _BULLET.match(line)
    indent = " " * len(m.group(1)) if m else re.match(r"\s*", line).group(0)  # type: ignore[union-attr]
    return textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [line]


def fit_markdown(text: str, width: int) -> str:
    r"""Markdown whose lines fit ``width`` columns: each table too wide split into column groups
    (:func:`_split_md_table`), each long line wrapped (:func:`_wrap_md_line`); code blocks as they are.

    >>> print(fit_markdown("| metric | mean | n |\n|---|---:|---:|\n| `mrr` | 0.5000 | 3 |\n", 20), end="")
    | metric | mean |
    |---|---:|
    | `mrr` | 0.5000 |
    <BLANKLINE>
    | metric | n |
    |---|---:|
    | `mrr` | 3 |
    """
    lines = text.split("\n")
    out: list[str] = []
    i, fence = 0, False
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            fence = not fence
        if fence or line.startswith("```"):
            out.append(line)
            i += 1
            continue
        if line.startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip()):
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            out += _split_md_table(lines[i:j], width)
            i = j
            continue
        out += _wrap_md_line(line, width)
        i += 1
    return "\n".join(out)


def detach_stdout() -> None:
    """Point stdout at ``/dev/null`` after its reader went away, so later writes and Python's final
    flush succeed silently instead of raising ``BrokenPipeError``."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (e.g. a test's capture): nothing to redirect
        pass
    finally:
        os.close(devnull)


def stdout_closed() -> bool:
    """True when stdout is a pipe whose reader has gone (poll reports an error on it)."""
    try:
        import select

        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _fd, ev in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll (Windows) or no real stdout
        return False


@contextlib.contextmanager
def stdout_may_close() -> Iterator[None]:
    """Run the block; if stdout's reader has gone (``BrokenPipeError``), detach stdout and carry on
    after the block (the rest of the command's work still happens, see the module docstring)."""
    try:
        yield
    except BrokenPipeError:
        if not stdout_closed():  # not stdout's reader (a socket, a child's pipe): a real error
            raise
        detach_stdout()


def emit(write: Callable[[], Any]) -> None:
    """Call ``write`` (something that prints to stdout) under :func:`stdout_may_close`."""
    with stdout_may_close():
        write()


#: Environment switches that keep dependencies' own progress bars and chatter (huggingface_hub's
#: and transformers' tqdm bars such as "Loading weights", transformers' warnings) off ragmeter's
#: display; a value the user set already is kept.
QUIET_DEPENDENCIES = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error",
                      "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}


def quiet_dependencies() -> None:
    """Silence the progress bars and warnings that model libraries print while loading (set before
    they are imported, through :data:`QUIET_DEPENDENCIES`; also applied to those already imported).
    ragmeter draws its own progress; theirs would print through it, and through ``-q``."""
    for name, value in QUIET_DEPENDENCIES.items():
        os.environ.setdefault(name, value)
    if "huggingface_hub" in sys.modules and os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1":
        with contextlib.suppress(Exception):
            sys.modules["huggingface_hub"].utils.disable_progress_bars()
    if "transformers" in sys.modules and os.environ["TRANSFORMERS_VERBOSITY"] == "error":
        with contextlib.suppress(Exception):
            logging_ = sys.modules["transformers"].utils.logging
            logging_.set_verbosity_error()
            logging_.disable_progress_bar()
