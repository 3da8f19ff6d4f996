"""What a judge is built from: :class:`JudgeConfig`, one frozen, picklable value, and :func:`from_spec`.

A config is built once (by the CLI from flags + config file + environment, or by a library caller)
and is the only thing engines receive: each place that needs a judge builds it with
:meth:`JudgeConfig.build` (a judge holds connections and is never shipped).

The :class:`~ragmeter.judges.Judge` keyword options are declared here as fields, so nothing is split
by inspecting a signature: a field left ``None`` takes the Judge's default; ``backend`` holds the
backend's own options (``api_key``, ``base_url``, ``structured_output``...). A Judge option added
later is one field here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..errors import JudgeAuthError
from .cache import default_cache_dir
from .judge import Judge
from .registry import backend_from_spec

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
        return replace(self, cache=str(default_cache_dir()))

    def build(self) -> Any:
        """The :class:`~ragmeter.judges.Judge` (raises as :func:`ragmeter.judges.from_spec` does,
        e.g. a missing API key, before any work starts)."""
        return from_spec(self.spec, **self.judge_options(), **dict(self.backend))

    def __repr__(self) -> str:
        shown = self.judge_options()
        backend = {k: ("***" if k in _SECRET_KEYS else v) for k, v in self.backend.items()}
        return f"JudgeConfig({self.spec!r}, {shown}, backend={backend})"


#: Keyword options of :class:`Judge` (the fields of :class:`~ragmeter.backend_config.JudgeConfig`);
#: :func:`from_spec` sends every other option to the backend.
JUDGE_OPTIONS = JudgeConfig.judge_option_names()


#: The API key placeholder of a dry-run judge built without a key (never sent: a dry run sends nothing).
DRY_RUN_KEY = "dry-run-sends-nothing"


def from_spec(spec: str, **options: Any) -> Judge:
    """Build a :class:`Judge` from a spec string such as ``openai:gpt-4o-mini``.

    ``options`` that :class:`Judge` takes (``cache``, ``concurrency``, ``rpm``, ``tpm``,
    ``timeout``, ``max_retries``, ``max_cost``, ``prices``, ``dry_run``, ``repeat``,
    ``temperature``, ``max_tokens``, ``seed``...) configure the judge; the rest go to the backend
    (``api_key``, ``base_url``, ``structured_output``...). A missing API key raises
    :class:`~ragmeter.errors.JudgeAuthError` here, naming the environment variable to set,
    except with ``dry_run=True``, which sends nothing and so needs no key.

    Examples: ``openai:gpt-4o-mini``, ``openai:qwen2.5@http://127.0.0.1:8080/v1``,
    ``ollama:llama3.1``, ``litellm:anthropic/claude-3-5-haiku``, ``llamacpp:/models/judge.gguf``.
    """
    judge_opts = {k: v for k, v in options.items() if k in JUDGE_OPTIONS}
    backend_opts = {k: v for k, v in options.items() if k not in JUDGE_OPTIONS}
    try:
        backend = backend_from_spec(spec, **backend_opts)
    except JudgeAuthError:
        if not judge_opts.get("dry_run") or "api_key" in backend_opts:
            raise
        # a dry run sends nothing, so it needs no key: the placeholder is never used
        backend = backend_from_spec(spec, **backend_opts, api_key=DRY_RUN_KEY)
    return Judge(backend, **judge_opts)


def resolve(judge: Any) -> Any:
    """The judge of a run: a spec string is built with :func:`from_spec`, a :class:`JudgeConfig`
    with its options; a judge object or None is returned as it is."""
    if isinstance(judge, str):
        return from_spec(judge)
    if isinstance(judge, JudgeConfig):
        return from_spec(judge.spec, **judge.judge_options(), **judge.backend)
    return judge


__all__ = ["DRY_RUN_KEY", "JUDGE_OPTIONS", "JudgeConfig", "from_spec", "resolve"]
