"""What a judge and an embedder are built from: :class:`JudgeConfig` and :class:`EmbedderConfig`.

Each is one frozen, picklable value, built once (by the CLI from flags + config file + environment,
or by a library caller) and the only thing engines receive: each place that needs a judge builds
it with :meth:`JudgeConfig.build` (the local engine once, every Ray task its own, since a judge
holds connections and is never shipped).

The :class:`~ragmeter.judges.Judge` keyword options are declared here as fields, so nothing is split
by inspecting a signature: a field left ``None`` takes the Judge's default; ``backend`` holds the
backend's own options (``api_key``, ``base_url``, ``structured_output``...). A Judge option added
later is one field here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

#: Keys of ``backend`` whose values are never shown (``repr``) nor recorded.
_SECRET_KEYS = frozenset({"api_key"})


@dataclass(frozen=True)
class JudgeConfig:
    """A judge: its spec string, the :class:`~ragmeter.judges.Judge` options, the backend options."""

    spec: str
    cache: bool | str | None = None
    concurrency: int | None = None
    adaptive: bool | None = None
    rpm: float | None = None
    tpm: float | None = None
    timeout: float | None = None
    max_retries: int | None = None
    backoff: float | None = None
    max_backoff: float | None = None
    max_retry_wait: float | None = None
    max_cost: float | None = None
    prices: Mapping[str, Any] | None = None
    dry_run: bool | None = None
    repeat: int | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    repair: bool | None = None
    unreachable_after: int | None = None
    backend: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def judge_option_names(cls) -> frozenset[str]:
        """The Judge keyword options this config carries (every field but ``spec`` and ``backend``)."""
        return frozenset(f.name for f in fields(cls) if f.name not in ("spec", "backend"))

    @classmethod
    def from_options(cls, spec: str, **options: Any) -> JudgeConfig:
        """``spec`` with ``options`` as :func:`ragmeter.judges.from_spec` takes them: the Judge's
        options go to their fields, every other one to ``backend``."""
        names = cls.judge_option_names()
        return cls(spec, **{k: v for k, v in options.items() if k in names},
                   backend={k: v for k, v in options.items() if k not in names})

    def judge_options(self) -> dict[str, Any]:
        """The Judge keyword arguments set (a ``None`` field is left to the Judge's default)."""
        return {n: getattr(self, n) for n in sorted(self.judge_option_names()) if getattr(self, n) is not None}

    def with_cache_dir(self) -> JudgeConfig:
        """This config with ``cache=True`` (or unset) resolved to the cache directory of this
        machine, so processes elsewhere (Ray workers) share the driver's cache."""
        if self.cache not in (None, True):
            return self
        from .judges import default_cache_dir

        return replace(self, cache=str(default_cache_dir()))

    def build(self) -> Any:
        """The :class:`~ragmeter.judges.Judge` (raises as :func:`ragmeter.judges.from_spec` does,
        e.g. a missing API key, before any work starts)."""
        from .judges import from_spec

        return from_spec(self.spec, **self.judge_options(), **dict(self.backend))

    def __repr__(self) -> str:
        shown = self.judge_options()
        backend = {k: ("***" if k in _SECRET_KEYS else v) for k, v in self.backend.items()}
        return f"JudgeConfig({self.spec!r}, {shown}, backend={backend})"


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
