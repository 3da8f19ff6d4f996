"""Generate ``docs/metrics.md``, the metric reference, from the registry.

``python -m ragmeter.docs`` rewrites the file. A test fails when a section of the committed file
differs from what the registry generates for that metric, so the reference never goes stale; a metric
added since the file was last generated is not an error there (adding a metric touches its module and
its test only), and the next ``python -m ragmeter.docs`` adds its section.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

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
        lines.append(f"- trec_eval name: `{spec.trec_name}`")
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


def main(argv: list[str] | None = None) -> int:
    """Write the reference to the path given (default ``docs/metrics.md``)."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0] if args else "docs/metrics.md")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
