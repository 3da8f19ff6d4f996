"""Command-line interface: a thin layer over the Python API (``ragmeter --help``).

Each sub-command lives in its own module of this package and attaches itself to
:data:`ragmeter.cli._app.main` with ``@main.command("NAME")``. The modules named in
:data:`COMMAND_MODULES` are loaded lazily: ``ragmeter --help`` reads their command names and
docstrings from source, and ``ragmeter NAME`` imports only the module defining ``NAME``
(see :class:`~ragmeter.cli._app.RagmeterGroup`).
"""

from __future__ import annotations

from ._app import command_index, main

COMMAND_MODULES = ("metrics_cmd", "eval_cmd", "run_cmd", "trec_cmd", "stats_cmd", "report_cmd", "init_cmd",
                   "judge_check")

main.lazy_modules = tuple(f"{__name__}.{m}" for m in COMMAND_MODULES)

__all__ = ["command_index", "main"]
