"""What a judge and an embedder are built from: :class:`JudgeConfig` and :class:`EmbedderConfig`.

Each is one frozen, picklable value, built once (by the CLI from flags + config file + environment,
or by a library caller) and the only thing engines receive: each place that needs a judge or an
embedder builds it with ``config.build()`` (a judge holds connections and is never shipped).
:class:`JudgeConfig` lives with the judges (:mod:`ragmeter.judges.config`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .judges.config import JudgeConfig


@dataclass(frozen=True)
class EmbedderConfig:
    """An embedder: its spec string and the backend options (``cache``, ``batch_size``, ``device``...)."""

    spec: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def build(self) -> Any:
        """The embedder (:func:`ragmeter.embedders.from_spec`)."""
        from .embedders import from_spec

        return from_spec(self.spec, **dict(self.options))


__all__ = ["EmbedderConfig", "JudgeConfig"]
