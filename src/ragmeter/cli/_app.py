"""The click group every ``ragmeter`` sub-command attaches to, and the error/exit-code policy.

Exit codes: 0 success; 1 quality gate failed; 2 usage or input error; 3 judge/infrastructure
errors above the tolerated rate; 4 an internal error (a bug: any exception ragmeter did not raise on
purpose); 130 interrupted (Ctrl-C). Errors print as one line (``ragmeter: error: ...``);
``--debug`` shows the traceback.
Exit 1 only ever means "quality gate failed": no crash can be mistaken for it.
A reader of stdout that stops early (``ragmeter metrics | head -1``) is not an error: stdout is
detached and the command exits as its work says (0 here; see :mod:`ragmeter.cli._output`).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from functools import cached_property
from typing import Any, cast

import click

from ..errors import RagmeterError
from ..names import parse_python

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_INFRA, EXIT_BUG = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT


def command_index(modules: tuple[str, ...]) -> dict[str, tuple[str, str | None]]:
    """``{command name: (module, docstring)}`` for every ``@main.command("NAME")`` in ``modules``.

    Read from each module's source with :mod:`ast`, without importing it: this is what lets
    ``ragmeter --help`` list every command (name and first docstring line) while importing none of
    them, so none of their dependencies (rich, pandas, pyarrow, ...) either. A module that does not
    exist is skipped.
    """
    out: dict[str, tuple[str, str | None]] = {}
    for module in modules:
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            continue
        with open(spec.origin, encoding="utf-8") as fh:
            tree = cast("ast.Module", parse_python(fh.read(), spec.origin))
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for dec in node.decorator_list:
                if (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute)
                        and isinstance(dec.func.value, ast.Name) and dec.func.value.id == "main"
                        and dec.func.attr in ("command", "group") and dec.args
                        and isinstance(dec.args[0], ast.Constant) and isinstance(dec.args[0].value, str)):
                    out[dec.args[0].value] = (module, ast.get_docstring(node))
    return out


class RagmeterGroup(click.Group):
    """A click group that turns RagmeterError (and file errors) into one line and exit code 2.

    Its commands load lazily (click's LazyGroup pattern): :attr:`lazy_modules` name the modules
    whose ``@main.command`` functions attach to the group; a module is imported only when one of
    its commands runs (or its own ``--help`` is asked), and the group's ``--help`` lists them from
    :func:`command_index` without importing anything.
    """

    lazy_modules: tuple[str, ...] = ()
    _listing = False

    @cached_property
    def _lazy(self) -> dict[str, tuple[str, str | None]]:
        return command_index(self.lazy_modules)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, loaded or not."""
        return sorted(set(self.commands) | set(self._lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, importing the module that defines it on first use."""
        if cmd_name not in self.commands and cmd_name in self._lazy:
            module, doc = self._lazy[cmd_name]
            if self._listing:  # a stand-in that only carries the help text
                return click.Command(cmd_name, help=doc)
            importlib.import_module(module)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands with their short help, without importing their modules."""
        self._listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._listing = False

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:  # click would turn it into "Aborted!" with exit 1, the gate's code
            click.echo("ragmeter: interrupted (results.jsonl holds every sample finished so far)", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except (RagmeterError, OSError) as exc:
            if isinstance(exc, BrokenPipeError) and _reader_gone():
                sys.exit(EXIT_OK)  # the reader of stdout stopped early (`| head`): not an error
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


def _reader_gone() -> bool:
    """True when stdout's reader has gone; stdout is then detached (see :mod:`ragmeter.cli._output`)."""
    from ._output import detach_stdout, stdout_closed

    if not stdout_closed():  # a socket or a child's pipe, not our reader: a real error
        return False
    detach_stdout()
    return True


@click.group(cls=RagmeterGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ragmeter")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """ragmeter: measure the quality of RAG pipelines (retrieval, generation, statistics)."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
