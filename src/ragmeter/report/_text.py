"""Evaluated text as the page shows it: bidirectional controls made visible, lengths in the script's units.

Every evaluated string reaches the page through :func:`show_bidi` (escaped HTML and the embedded
JSON alike), so an offset the page's script applies to such a string counts the visible marks, in
the UTF-16 code units JavaScript strings are indexed by: :func:`display_offsets` maps Python's
character offsets to those.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Unicode bidirectional formatting characters: embeddings, overrides, isolates and marks.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI_VISIBLE = {ord(c): f"[U+{ord(c):04X}]" for c in BIDI_CONTROLS}
_BIDI_SET = frozenset(BIDI_CONTROLS)


def show_bidi(text: str) -> str:
    """``text`` with every bidirectional control replaced by a visible ``[U+XXXX]`` mark.

    >>> show_bidi("invoice\u202etxt.exe")
    'invoice[U+202E]txt.exe'
    """
    return text.translate(_BIDI_VISIBLE)


def _display_len(piece: str) -> int:
    """How many UTF-16 code units ``show_bidi(piece)`` is."""
    if piece.isascii():
        return len(piece)
    return sum(8 if ch in _BIDI_SET else 2 if ord(ch) > 0xFFFF else 1 for ch in piece)


def display_offsets(text: str, offsets: Sequence[int]) -> list[int]:
    """Each of the sorted character ``offsets`` of ``text`` as an offset in ``show_bidi(text)`` as the
    page's script indexes it (UTF-16 code units).

    >>> display_offsets("a\u202eb😀c", [0, 1, 2, 3, 4, 5])
    [0, 1, 9, 10, 12, 13]
    """
    out: list[int] = []
    at, shown = 0, 0
    for off in offsets:
        shown += _display_len(text[at:off])
        at = off
        out.append(shown)
    return out
