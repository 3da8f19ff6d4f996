"""The report's slices section: ``summary.json``'s ``slices`` block (``--slice``) as tables."""

from __future__ import annotations

from typing import Any

from ..stats.slices import SLICE_COLUMNS, slice_rows
from ._html import escape_html


def render_slices(slices: dict[str, Any] | None) -> str:
    """One table per sliced field (slice, metric, n, mean with its interval, the rest's mean, p,
    Holm-adjusted p, note); '' when the run has no slices."""
    if not slices:
        return ""
    parts = ['<section id="slices"><h2>Slices</h2>']
    for field, block in slices.items():
        parts.append(f"<h3>by {escape_html(field)} <span class=\"muted\">({escape_html(block.get('kind', ''))}; "
                     "Welch t-test of each slice against the rest, Holm-corrected)</span></h3>")
        head = "".join(f"<th>{escape_html(c)}</th>" for c in SLICE_COLUMNS)
        body = "".join("<tr>" + "".join(f"<td>{escape_html(c)}</td>" for c in row) + "</tr>"
                       for row in slice_rows(field, block))
        parts.append(f'<table class="slices"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')
    parts.append("</section>")
    return "".join(parts)
