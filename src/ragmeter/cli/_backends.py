"""Turning configuration (file + flags) into a judge and an embedder, before any work starts."""

from __future__ import annotations

import os
from typing import Any

from ..backend_config import EmbedderConfig, JudgeConfig
from ..config import EvalConfig
from ..embedders import DEFAULT_SPEC, wants_default
from ..errors import InvalidParameterError


def parse_prices(pairs: tuple[str, ...]) -> dict[str, tuple[float, ...]]:
    """``("gpt-4o-mini=0.15,0.60",)`` -> ``{"gpt-4o-mini": (0.15, 0.6)}``; a third number is the
    cached-input price (``gpt-4o-mini=0.15,0.60,0.075``). USD per 1M tokens, each price then checked
    as the judge checks a price table (:func:`~ragmeter.judges.pricing.check_prices`: not negative)."""
    from ..judges.pricing import check_prices

    out: dict[str, tuple[float, ...]] = {}
    for pair in pairs:
        model, sep, rest = pair.partition("=")
        try:
            values = tuple(float(x) for x in rest.split(","))
        except ValueError:
            values = ()
        if not sep or not model.strip() or len(values) not in (2, 3):
            raise InvalidParameterError(f"--judge-price: expected MODEL=INPUT,OUTPUT[,CACHED_INPUT] (USD per 1M "
                                        f"tokens), got {pair!r}")
        try:
            out |= check_prices({model.strip(): values})
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"--judge-price: {exc}") from None
    return out


def judge_config(cfg: EvalConfig, *, dry_run: bool = False, repeat: int = 1, key_env: str | None = None,
                 base_url: str | None = None, extra: dict[str, Any] | None = None) -> JudgeConfig | None:
    """The :class:`~ragmeter.backend_config.JudgeConfig` that ``cfg`` (config file merged with the
    flags), the flags given here and the environment (``key_env``) configure; None without a judge.
    Built once: every engine builds its judges from it."""
    if key_env and key_env not in os.environ:
        raise InvalidParameterError(f"--judge-key-env: environment variable {key_env} is not set")
    if not cfg.judge:
        return None
    options: dict[str, Any] = {
        "concurrency": None if cfg.concurrency == "auto" else cfg.concurrency,
        "adaptive": cfg.concurrency == "auto",  # N: exactly N in flight, no adaptation
        "rpm": cfg.rate_limits.requests_per_minute,
        "tpm": cfg.rate_limits.tokens_per_minute,
        "cache": (cfg.cache.dir or True) if cfg.cache.enabled else False,
        "max_cost": cfg.max_cost,
        "unreachable_after": cfg.unreachable_after,
        "prices": {m: p.as_tuple() for m, p in cfg.prices.items()} or None,
        "dry_run": dry_run,
        "repeat": repeat,
    }
    if key_env:
        options["api_key"] = os.environ[key_env]
    elif cfg.api_key_env:
        options["api_key_env"] = cfg.api_key_env  # a key named for this judge (docs/judges.md)
    if base_url:
        options["base_url"] = base_url
    if cfg.extra_body:
        options["extra_body"] = dict(cfg.extra_body)
    options.update({k: v for k, v in (extra or {}).items() if v is not None})
    return JudgeConfig.from_options(cfg.judge, **options)


def embedder_config(cfg: EvalConfig, *, default: bool = False,
                    metrics: list[str] | None = None) -> EmbedderConfig | None:
    """The embedder configured by ``cfg``; with ``default`` and none configured, the offline MiniLM
    model when :func:`ragmeter.embedders.wants_default` says a run over ``metrics`` uses it (the
    rule ``ragmeter.evaluate(embedder="auto")`` follows); else None."""
    spec = cfg.embedder
    if not spec and default and wants_default(metrics):
        spec = DEFAULT_SPEC
    if not spec:
        return None
    return EmbedderConfig(spec, {"cache": (cfg.cache.dir or True) if cfg.cache.enabled else False})
