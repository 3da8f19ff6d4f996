"""Generate the reference pages: ``docs/metrics.md`` and the measure table of ``docs/trec.md`` from the
registry, ``docs/cli.md`` from the command line's own help.

``python -m ragmeter.docs`` rewrites ``docs/metrics.md`` and ``docs/cli.md`` and, in ``docs/trec.md``, the
table that starts
with :data:`TREC_TABLE_HEADER` (the text around it is kept as written). A test fails when a section of
the committed reference, or a row of the committed table, differs from what the registry generates now,
so neither goes stale. A metric added since the files were last generated is not an error there (adding a
metric touches its module and its test only): its reference section may be absent, and a trec_eval
measure it computes (its ``trec_name``) may still read ``-`` in the table's ragmeter column; the next
``python -m ragmeter.docs`` adds both.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

import click

from .cli import command_index
from .cli import main as cli_main
from .registry import MetricSpec, list_metrics

HEADER = """# Metric reference

Generated from the registry by `python -m ragmeter.docs`; do not edit by hand.

Names are values: `ndcg@10`, `recall@5`, `ndcg(gain=linear)@10`. Parameters equal to their
default are dropped from the canonical name. Every result records the metric's version.
"""


def _needs(spec: MetricSpec) -> str:
    needs = [x for x, on in (("judge", spec.needs_judge), ("embedder", spec.needs_embedder)) if on]
    if spec.extra.get("needs"):
        needs.append(str(spec.extra["needs"]))
    return ", ".join(needs) or "nothing (no model)"


def render_spec(spec: MetricSpec) -> str:
    """The Markdown section for one metric."""
    lines = [f"### `{spec.name}`", "", spec.summary, ""]
    if spec.aliases:
        lines.append(f"- aliases: {', '.join(f'`{a}`' for a in spec.aliases)}")
    cutoff = {"none": "no", "optional": "optional (`@k`)", "required": "required (`@k`)"}[spec.cutoff]
    lines += [
        f"- category: {spec.category}; measures: the {spec.role or 'unclassified'} stage; version: {spec.version}; "
        f"{'higher' if spec.higher_is_better else 'lower'} is better",
        f"- cutoff: {cutoff}",
        f"- needs: {_needs(spec)}",
        f"- reads: {', '.join(spec.requires) or '-'}"
        + (f"; and one of: {', '.join(spec.requires_any)}" if spec.requires_any else ""),
    ]
    if spec.trec_name:
        at = ", ".join(f"{k}={v}" for k, v in spec.trec_params)
        lines.append(f"- trec_eval name: `{spec.trec_name}`" + (f" (with {at})" if at else ""))
    if spec.default_names:
        lines.append(f"- evaluated by default as: {', '.join(f'`{n}`' for n in spec.default_names)}")
    if spec.params:
        lines.append("- parameters:")
        for p in spec.params:
            choices = f" (one of {', '.join(map(str, p.choices))})" if p.choices else ""
            lines.append(f"  - `{p.name}` ({p.type.__name__}, default `{p.default}`){choices}: {p.description}")
    lines += ["", "Formula:", "", "```", spec.formula, "```", "", "Edge cases:", ""]
    lines += [f"- {e}" for e in spec.edge_cases]
    lines += [f"- {spec.undefined}", ""]
    return "\n".join(lines)


def render(names: Iterable[str] | None = None) -> str:
    """The whole ``docs/metrics.md``; with ``names``, only the sections of those metrics (what a committed
    reference written before newer metrics holds, which ``tests/test_docs.py`` compares)."""
    keep = None if names is None else set(names)
    parts = [HEADER]
    category = None
    for spec in list_metrics():
        if keep is not None and spec.name not in keep:
            continue
        if spec.category != category:
            category = spec.category
            parts.append(f"## {category.capitalize()} metrics\n")
        parts.append(render_spec(spec))
    return "\n".join(parts).rstrip() + "\n"


#: The first two lines of the measure table in ``docs/trec.md`` (:func:`render_trec_table`).
TREC_TABLE_HEADER = ("| trec_eval name | formula (per query) | parameters (default) | summary | ragmeter name |\n"
                     "|---|---|---|---|---|")
_PARAM_KINDS = {"cut": "integer cutoffs", "cut_double": "fractional cutoffs", "double": "numbers",
                "pairs": "level=gain pairs"}
_SUMMARIES = {"mean": "mean", "gm": "geometric mean", "sum": "sum", "count": "count", "runid": "run name",
              "none": "per query only"}
_TREC_ROW = re.compile(r"^\| `([^`]+)` \|.*\| ([^|]+) \|$")


def _trec_params(row: dict[str, str]) -> str:
    if not row["params"]:
        return "-"
    kind = _PARAM_KINDS[row["params"]]
    if row["params"] == "pairs":
        return f"{kind} and {row['note']}" if row["note"] else f"{kind} (gain = level)"
    return f"{kind} ({row['default']})"


def render_trec_table(named: Iterable[str] | None = None) -> str:
    """The measure table of ``docs/trec.md``: one row per trec_eval measure (``ragmeter.trec.measures.TABLE``,
    in trec_eval's order) with its formula, parameters, summary and the ragmeter metric that computes it, read
    from the registry (a spec's ``trec_name``). With ``named``, the ragmeter column names a metric only for
    those trec_eval measures and reads ``-`` elsewhere (what a table generated before a metric was added
    holds, which ``tests/test_docs.py`` compares)."""
    from .trec.measures import trec_table

    keep = None if named is None else set(named)
    lines = [TREC_TABLE_HEADER]
    for row in trec_table():
        metric = row["ragmeter"] if keep is None or row["trec_eval"] in keep else ""
        lines.append(f"| `{row['trec_eval']}` | {row['formula']} | {_trec_params(row)} | "
                     f"{_SUMMARIES[row['summary']]} | {f'`{metric}`' if metric else '-'} |")
    return "\n".join(lines) + "\n"


def _trec_table_span(text: str) -> tuple[int, int]:
    """Start and end offsets of the measure table in ``docs/trec.md``'s text (header to last row)."""
    start = text.find(TREC_TABLE_HEADER)
    if start < 0:
        raise ValueError("docs/trec.md has no measure table (its header line is not there)")
    end = start
    for line in text[start:].splitlines(keepends=True):
        if not line.startswith("|"):
            break
        end += len(line)
    return start, end


def trec_table_in(text: str) -> tuple[str, set[str]]:
    """The measure table found in ``docs/trec.md``'s text and the trec_eval measures whose ragmeter
    column names a metric there."""
    start, end = _trec_table_span(text)
    table = text[start:end]
    named = {m.group(1) for m in map(_TREC_ROW.match, table.splitlines()) if m and m.group(2).strip() != "-"}
    return table, named


def with_trec_table(text: str) -> str:
    """``docs/trec.md``'s text with its measure table regenerated and everything else as it was."""
    start, end = _trec_table_span(text)
    return text[:start] + render_trec_table() + text[end:]


CLI_HEADER = """# Command-line reference

Generated from the commands' own `--help` by `python -m ragmeter.docs`; do not edit by hand. Every
command is one call in Python too (the pages of docs/ say which). Exit codes: 0 success, 1 the
quality gate failed, 2 a usage or input error, 3 judge or infrastructure errors above the tolerated
rate, 4 an internal error (a bug), 130 interrupted.
"""

#: The width the help text is wrapped at in ``docs/cli.md`` (fixed, so the page does not depend on the terminal).
CLI_WIDTH = 100


def render_cli() -> str:
    """``docs/cli.md``: every ``ragmeter`` command's ``--help``, in name order."""
    parts = [CLI_HEADER]
    group = click.Context(cli_main, info_name="ragmeter", terminal_width=CLI_WIDTH, max_content_width=CLI_WIDTH)
    parts.append(f"## `ragmeter`\n\n```text\n{cli_main.get_help(group)}\n```\n")
    for name in sorted(command_index(cli_main.lazy_modules)):
        cmd = cli_main.get_command(group, name)
        if cmd is None:
            continue
        ctx = click.Context(cmd, info_name=f"ragmeter {name}", terminal_width=CLI_WIDTH, max_content_width=CLI_WIDTH)
        parts.append(f"## `ragmeter {name}`\n\n```text\n{cmd.get_help(ctx)}\n```\n")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Write the reference to the path given (default ``docs/metrics.md``), ``cli.md`` beside it, and
    regenerate the measure table of the second path given (default ``trec.md`` beside the reference)."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0] if args else "docs/metrics.md")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(), encoding="utf-8")
    print(f"wrote {path}")
    cli = path.parent / "cli.md"
    cli.write_text(render_cli(), encoding="utf-8")
    print(f"wrote {cli}")
    trec = Path(args[1]) if len(args) > 1 else path.parent / "trec.md"
    if trec.exists():
        trec.write_text(with_trec_table(trec.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"wrote the measure table of {trec}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
