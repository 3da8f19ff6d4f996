"""``ragmeter init``: write a commented starter ``ragmeter.yaml``."""

from __future__ import annotations

from pathlib import Path

import click

from ..config import DEFAULT_FILE, STARTER
from ..errors import InvalidParameterError
from ._app import main


@main.command("init")
@click.argument("path", default=DEFAULT_FILE, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def init_cmd(path: Path, force: bool) -> None:
    """Write a commented starter configuration to PATH (default ./ragmeter.yaml)."""
    if path.exists() and not force:
        raise InvalidParameterError(f"{path} exists: pass --force to overwrite it")
    path.write_text(STARTER, encoding="utf-8")
    click.echo(f"wrote {path}: edit it, then run `ragmeter eval DATA` in this directory")
