"""What the CLI writes to stdout, so that it survives terminals, CI logs and pipes.

Rules:

* **Formats.** ``--format table`` is a rich table, ``markdown`` a GitHub-flavoured Markdown table
  (the same text :func:`ragmeter.gate.markdown` writes for ``--markdown`` and the job summary),
  ``json`` the summary as ``summary.json`` holds it. With no ``--format``, a terminal gets the
  table and anything else (a CI log, a pipe, a file) the Markdown table.
* **Full numbers at any width.** A table is drawn at the width its cells need (never narrower),
  so no number is ever cut to ``0.67…`` because ``$COLUMNS`` is small or stdout is not a
  terminal; a terminal narrower than the table wraps its lines instead.
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
import sys
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console

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


def print_full_width(console: Console, renderable: Any) -> None:
    """Print ``renderable`` (a rich table) at the width it needs, however narrow ``console`` is,
    so no cell is ever ellipsised: a rich table shrinks to the console's width by cutting cells."""
    needed = console.measure(renderable, options=console.options.update_width(10_000)).maximum
    if needed <= console.width:
        console.print(renderable)
        return
    wide = StdoutConsole(file=console.file, width=needed, color_system="auto" if console.color_system else None,
                         force_terminal=console.is_terminal, no_color=console.no_color, highlight=False)
    wide.print(renderable)


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
