"""The click group every ``ragmeter`` sub-command attaches to, and the error/exit-code policy.

Exit codes: 0 success; 1 quality gate failed; 2 usage or input error; 3 judge/infrastructure
errors above the tolerated rate; 4 an internal error (a bug: any exception ragmeter did not raise on
purpose); 130 interrupted (Ctrl-C). Errors print as one line (``ragmeter: error: ...``);
``--debug`` shows the traceback.
Exit 1 only ever means "quality gate failed": no crash can be mistaken for it.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import RagmeterError

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_INFRA, EXIT_BUG = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT


class RagmeterGroup(click.Group):
    """A click group that turns RagmeterError (and file errors) into one line and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:  # click would turn it into "Aborted!" with exit 1, the gate's code
            click.echo("ragmeter: interrupted (results.jsonl holds every sample finished so far)", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except (RagmeterError, OSError) as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"ragmeter: error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        except Exception as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"ragmeter: internal error: {type(exc).__name__}: {exc}. This is a bug, please report "
                       "it (with the output of the same command with --debug).", err=True)
            sys.exit(EXIT_BUG)


@click.group(cls=RagmeterGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ragmeter")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """ragmeter: measure the quality of RAG pipelines (retrieval, generation, statistics)."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
