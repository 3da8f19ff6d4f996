"""Command-line interface: a thin layer over the Python API (``ragmeter --help``).

Each sub-command lives in its own module of this package and attaches itself to
:data:`ragmeter.cli._app.main`; every module named in :data:`COMMAND_MODULES` that exists is
imported here.
"""

from __future__ import annotations

import importlib
import importlib.util

from ._app import main

COMMAND_MODULES = ("metrics_cmd", "eval_cmd", "trec_cmd", "stats_cmd", "report_cmd", "init_cmd")

for _mod in COMMAND_MODULES:
    if importlib.util.find_spec(f"{__name__}.{_mod}") is not None:
        importlib.import_module(f"{__name__}.{_mod}")

__all__ = ["main"]
