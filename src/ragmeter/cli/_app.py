"""The click group every ``ragmeter`` sub-command attaches to, and the error/exit-code policy.

Exit codes: 0 success; 1 quality gate failed; 2 usage or input error; 3 judge/infrastructure
errors above the tolerated rate. Errors print as one line (``ragmeter: error: ...``); ``--debug``
shows the traceback.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import RagmeterError

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_INFRA = 0, 1, 2, 3


class RagmeterGroup(click.Group):
    """A click group that turns RagmeterError (and file errors) into one line and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (RagmeterError, OSError) as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"ragmeter: error: {exc}", err=True)
            sys.exit(EXIT_USAGE)


@click.group(cls=RagmeterGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ragmeter")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """ragmeter: measure the quality of RAG pipelines (retrieval, generation, statistics)."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
