"""``import ragmeter`` and ``ragmeter --help`` import no heavy dependency (fast import)."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

import ragmeter
from ragmeter.cli import main
from ragmeter.cli._app import command_index

HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "rich", "pydantic", "aiohttp", "openai", "yaml", "sklearn")

PROBE = """
import json, sys
{code}
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def _heavy_loaded(code: str) -> tuple[list[str], str]:
    proc = subprocess.run([sys.executable, "-c", PROBE.format(code=code, heavy=HEAVY)],
                          capture_output=True, text=True, check=True, timeout=120)
    *head, last = proc.stdout.strip().splitlines()
    return json.loads(last), "\n".join(head)


def test_import_ragmeter_loads_no_heavy_module():
    loaded, _ = _heavy_loaded("import ragmeter")
    assert loaded == []


def test_help_loads_no_heavy_module_and_lists_every_command():
    loaded, out = _heavy_loaded(
        "from ragmeter.cli import main\n"
        "main(['--help'], standalone_mode=False)\n"
        "assert not [m for m in sys.modules if m.startswith('ragmeter.cli.') and m.endswith('_cmd')]")
    assert loaded == []
    for name in ("eval", "metrics", "trec", "compare", "calibrate", "diagnose", "fuse", "report", "init"):
        assert f"\n  {name} " in out


def test_using_a_name_loads_it():
    loaded, _ = _heavy_loaded("import ragmeter\nragmeter.Sample")
    assert "pydantic" in loaded  # the probe can see a heavy module when one is loaded


def test_lazy_help_matches_each_commands_own_help():
    index = command_index(main.lazy_modules)
    assert set(index) == {"eval", "run", "metrics", "trec", "compare", "calibrate", "diagnose", "fuse", "report",
                          "init", "judge-check"}
    ctx = click.Context(main)
    for name, (_module, doc) in index.items():
        real = main.get_command(ctx, name)
        assert real is not None and real.name == name
        assert click.Command(name, help=doc).get_short_help_str(60) == real.get_short_help_str(60)


def test_all_lists_exactly_the_lazy_names():
    assert set(ragmeter.__all__) == {*ragmeter._LAZY, "__version__"}


@pytest.mark.parametrize("name", ragmeter.__all__)
def test_every_public_name_resolves(name):
    assert getattr(ragmeter, name) is not None
    assert name in dir(ragmeter)


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ragmeter.nope  # noqa: B018
