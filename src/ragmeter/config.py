"""The configuration file, ``ragmeter.yaml``: what to evaluate and with which backends, declaratively.

::

    rag:
      eval:
        metrics: [faithfulness, answer_relevancy, context_relevancy, context_recall]
        model: ${JUDGE_LLM_REF}          # judge spec; `judge:` is the same key
        embedder: bert:all-MiniLM-L6-v2

``${VAR}`` and ``${VAR:-default}`` expand from the environment, and only in the fields that exist to
hold endpoints and credentials (:data:`EXPANDS`): the judge and embedder specs and the cache
directory. In a spec a variable is the whole value (``model: ${JUDGE_LLM_REF}``) or lies in its
base URL (``openai:m@${JUDGE_URL}``, ``openai:m@http://admin:${PW}@host/v1``), never in the
backend or model name, which are sent and recorded as they are. Anywhere else (criteria, prompts,
output paths, metric names, the baseline, field names) a ``${VAR}`` is an input error naming the
file and the line: a configuration picked up from a cloned repository must not copy the
environment into prompts, outputs or folder names. An unset variable without a default is an
error naming it and the line. A value that came from the environment is recorded in outputs as
written (``${VAR}``, see :meth:`Config.as_written`), so ``summary.json`` and the report never copy
an environment variable. Only plain YAML is read: a tag (``!!python/object/apply``,
``!custom``), a recursive alias, or aliases that expand past :data:`MAX_NODES` nodes are an error
naming the file and the line. The file is validated with pydantic: an unknown key or a
wrong type is an error naming the key and its line. Named presets (``preset: offline`` or
``preset: retrieval``) supply the metric list when ``metrics`` is not given. Each ``rubrics:``
entry is registered as a judged metric under its name when the file is loaded
(:mod:`ragmeter.metrics.generation.rubric`), so ``metrics:`` and ``-m`` find it. Command-line flags
override the file (:func:`merge_cli`). ``ragmeter init`` writes :data:`STARTER` to disk.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from .errors import InputError

DEFAULT_FILE = "ragmeter.yaml"

#: Preset name -> what it selects (see :func:`preset_metrics`).
PRESETS: dict[str, str] = {
    "retrieval": "the default names of every metric whose role is retrieval (no model, no cost)",
    "offline": "the default names of every metric that needs neither a judge nor an embedder",
}


def preset_metrics(name: str) -> list[str]:
    """The metric names of preset ``name``, derived from the registry (never a list kept by hand).

    ``retrieval``: the ``default_names`` of every spec with ``role == "retrieval"``.
    ``offline``: the ``default_names`` of every spec with neither ``needs_judge`` nor
    ``needs_embedder`` (so it runs with no model at all). Registry order (category, then name).
    A metric registered later (a plugin) joins the preset its properties put it in.
    """
    from .registry import list_metrics

    if name not in PRESETS:
        raise InputError(f"preset: expected one of {', '.join(PRESETS)}, got {name!r}")
    if name == "retrieval":
        specs = [s for s in list_metrics() if s.role == "retrieval"]
    else:
        specs = [s for s in list_metrics() if not (s.needs_judge or s.needs_embedder)]
    return [n for s in specs for n in s.default_names]


#: The YAML tags a configuration may use (what ``yaml.safe_load`` resolves plain YAML to).
SAFE_TAGS = frozenset("tag:yaml.org,2002:" + t for t in (
    "str", "int", "float", "bool", "null", "map", "seq", "timestamp", "binary", "merge"))
#: Most nodes a configuration may expand to through aliases ("billion laughs" guard).
MAX_NODES = 100_000

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class RateLimits(BaseModel):
    """Requests and tokens per minute sent to the judge (None = unlimited)."""

    model_config = ConfigDict(extra="forbid")
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)


class CacheConfig(BaseModel):
    """The judge / embedding response cache."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    dir: str | None = None


class Price(BaseModel):
    """USD per million tokens; ``cached_input`` is a prompt token served from the provider's prompt
    cache (the input price when not given)."""

    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)

    def as_tuple(self) -> tuple[float, ...]:
        """``(input, output)`` or ``(input, output, cached_input)``, the judge's price form."""
        return (self.input, self.output) if self.cached_input is None else (self.input, self.output,
                                                                             self.cached_input)

    @classmethod
    def from_tuple(cls, price: tuple[float, ...]) -> Price:
        """The inverse of :meth:`as_tuple`."""
        return cls(input=price[0], output=price[1], cached_input=price[2] if len(price) > 2 else None)


class GateConfig(BaseModel):
    """The CI gate: thresholds per metric and how to compare."""

    model_config = ConfigDict(extra="forbid")
    fail_under: dict[str, float] = Field(default_factory=dict)
    statistic: Literal["mean", "ci_low"] = "mean"
    baseline: str | None = None
    alpha: float = Field(default=0.05, gt=0, lt=1)
    max_error_rate: float = Field(default=0.05, ge=0, le=1)

    @field_validator("fail_under")
    @classmethod
    def _in_unit_interval(cls, v: dict[str, float]) -> dict[str, float]:
        for name, t in v.items():
            if not 0.0 <= t <= 1.0:
                raise ValueError(f"threshold for {name!r} must be in [0, 1], got {t}")
        return v


class RubricConfig(BaseModel):
    """One ``rubrics:`` entry: a judged metric defined by its criteria
    (:mod:`ragmeter.metrics.generation.rubric`)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    criteria: str
    steps: list[str] = Field(default_factory=list)
    inputs: list[Literal["question", "answer", "contexts", "reference"]] = Field(
        default=["question", "answer"], min_length=1)
    scale: str = "1-5"


class EvalConfig(BaseModel):
    """The ``rag.eval`` section."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    metrics: list[str] | None = None
    preset: Literal["offline", "retrieval"] | None = None
    judge: str | None = Field(default=None, alias="model")
    embedder: str | None = None
    #: the environment variable holding the judge's API key, sent to the judge's URL whatever it
    #: is (without it, ``OPENAI_API_KEY`` goes only to api.openai.com or ``$OPENAI_BASE_URL``'s origin)
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    #: ``auto``: adaptive, up to 16 in flight (see ragmeter.judges.concurrency); N: exactly N, fixed
    concurrency: int | Literal["auto"] = "auto"
    #: fields added to every judge request body, for a server's own sampling options (e.g.
    #: ``{repeat_penalty: 1.0}`` for llama-cpp-python's server); part of the cache key
    extra_body: dict[str, Any] = Field(default_factory=dict)
    rate_limits: RateLimits = Field(default_factory=RateLimits)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    prices: dict[str, Price] = Field(default_factory=dict)
    max_cost: float | None = Field(default=None, gt=0)
    #: failed judge requests in a row (no reply in between) after which the run stops, exit 3
    #: (default 6; ragmeter.judges.judge.FAILED_IN_A_ROW)
    unreachable_after: int | None = Field(default=None, ge=1)
    gate: GateConfig = Field(default_factory=GateConfig)
    output: str = "ragmeter-out"
    fields: dict[str, str] = Field(default_factory=dict, description="input column -> canonical field")
    on_error: Literal["raise", "skip"] = "raise"
    rubrics: list[RubricConfig] = Field(default_factory=list)

    @field_validator("concurrency", mode="before")
    @classmethod
    def _concurrency(cls, v: Any) -> Any:
        if isinstance(v, str) and v.strip().lower() == "auto":
            return "auto"
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 1024:
            raise ValueError(f"expected 'auto' or an integer 1-1024, got {v!r}")
        return v

    def metric_names(self) -> list[str] | None:
        """The metrics to evaluate: ``metrics`` if given, else the preset's, else None (data decides)."""
        if self.metrics is not None:
            return list(self.metrics)
        return preset_metrics(self.preset) if self.preset else None


class RagSection(BaseModel):
    """The ``rag`` section."""

    model_config = ConfigDict(extra="forbid")
    eval: EvalConfig = Field(default_factory=EvalConfig)


class Config(BaseModel):
    """The whole file."""

    model_config = ConfigDict(extra="forbid")
    rag: RagSection = Field(default_factory=RagSection)
    _source: str | None = PrivateAttr(default=None)
    _written: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def source(self) -> str | None:
        """The file this configuration was loaded from (None: the defaults)."""
        return self._source

    def as_written(self, value: Any) -> Any:
        """``value`` (a string, or a dict / list of them) with every string that a ``${VAR}``
        expansion produced replaced by the text as written in the file (``${JUDGE_LLM_REF}``)."""
        if not self._written:
            return value
        if isinstance(value, str):
            return self._written.get(value, value)
        if isinstance(value, dict):
            return {k: self.as_written(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.as_written(v) for v in value]
        return value

    @property
    def eval(self) -> EvalConfig:
        """Shortcut for ``config.rag.eval``."""
        return self.rag.eval


def expand_env(text: str, *, path: str = "<config>", line: int | None = None,
               env: dict[str, str] | None = None) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}`` in ``text`` from ``env`` (default ``os.environ``)."""
    environ = os.environ if env is None else env

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        if name in environ and environ[name] != "":
            return environ[name]
        if default is not None:
            return default
        raise InputError(
            f"environment variable {name} is not set (and ${{{name}}} has no default): "
            f"export {name}=... or write ${{{name}:-default}}",
            path=path, line=line,
        )

    return _VAR.sub(sub, text)


#: The keys under ``rag.eval`` whose values may hold ``${VAR}``: ``spec`` (a judge or embedder spec:
#: the variable is the whole value or lies in the base URL) or ``any`` (anywhere in the value).
EXPANDS: dict[tuple[str, ...], Literal["spec", "any"]] = {
    ("model",): "spec", ("judge",): "spec", ("embedder",): "spec", ("cache", "dir"): "any",
}
_SPEC_URL = re.compile(r"@(?=https?://|\$\{)", re.IGNORECASE)


def _where_expands(keys: tuple[str, ...]) -> Literal["spec", "any"] | None:
    return EXPANDS.get(keys[2:]) if keys[:2] == ("rag", "eval") else None


def _spec_vars_ok(raw: str) -> bool:
    """True when every ``${VAR}`` of spec ``raw`` is the whole value or lies in its base URL."""
    found = list(_VAR.finditer(raw))
    if len(found) == 1 and found[0].span() == (0, len(raw.strip())) and raw == raw.strip():
        return True
    at = _SPEC_URL.search(raw)
    return at is not None and all(m.start() > at.start() for m in found)


def _refuse_var(raw: str, keys: tuple[str, ...], path: str, line: int) -> InputError:
    name = _VAR.search(raw)
    var = f"${{{name.group(1)}}}" if name else "${...}"
    where = ".".join(keys) or "this value"
    return InputError(
        f"{var} in {where}: ${{VAR}} expands only in the judge and embedder specs (as the whole spec or in "
        "its base URL) and in cache.dir; write the value itself here", path=path, line=line)


def _expand_node(node: yaml.Node, path: str, env: dict[str, str] | None, written: dict[str, str],
                 keys: tuple[str, ...] = (), expanded: set[int] | None = None) -> None:
    """Expand ``${VAR}`` in the scalars where :data:`EXPANDS` allows it; anywhere else (a node
    reached there through an alias included) a variable is an :class:`InputError`."""
    expanded = set() if expanded is None else expanded
    if isinstance(node, yaml.ScalarNode):
        line = node.start_mark.line + 1
        kind = _where_expands(keys)
        if id(node) in expanded:  # an alias of a value expanded elsewhere
            if kind is None:
                raise _refuse_var(written.get(node.value, node.value), keys, path, line)
            return
        if "${" not in node.value or not _VAR.search(node.value):
            return
        raw = node.value
        if kind is None or (kind == "spec" and not _spec_vars_ok(raw)):
            raise _refuse_var(raw, keys, path, line)
        node.value = expand_env(raw, path=path, line=line, env=env)
        expanded.add(id(node))
        if node.value != raw:
            written[node.value] = raw
    elif isinstance(node, yaml.SequenceNode):
        for i, child in enumerate(node.value):
            _expand_node(child, path, env, written, (*keys, str(i)), expanded)
    elif isinstance(node, yaml.MappingNode):
        for key, child in node.value:
            # a merge key (``<<: *defaults``) adds its keys to this mapping: the same place
            name = key.value if isinstance(key, yaml.ScalarNode) else "?"
            _expand_node(child, path, env, written, keys if name == "<<" else (*keys, name), expanded)


def _check_nodes(root: yaml.Node, path: str) -> None:
    """Reject tags beyond plain YAML, recursive aliases and alias bombs, naming the line."""
    size: dict[int, int] = {}
    active: set[int] = set()

    def visit(node: yaml.Node) -> int:
        key = id(node)
        line = node.start_mark.line + 1
        if key in active:
            raise InputError("a recursive alias (an anchor that contains itself): expected plain YAML "
                             "without cycles", path=path, line=line)
        if key in size:
            return size[key]
        if node.tag not in SAFE_TAGS:
            raise InputError(f"the YAML tag {node.tag.replace('tag:yaml.org,2002:', '!!')!r} is not allowed: "
                             "ragmeter reads plain YAML only (strings, numbers, lists, mappings)",
                             path=path, line=line)
        active.add(key)
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        total = 1 + sum(visit(c) for c in children)
        active.discard(key)
        if total > MAX_NODES:
            raise InputError(f"the aliases expand to more than {MAX_NODES:,} values: expected a small "
                             "configuration file", path=path, line=line)
        size[key] = total
        return total

    visit(root)


def _line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the YAML node at pydantic location ``loc`` (its nearest existing parent)."""
    node = root
    line = None if root is None else root.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == part:
                    line = key.start_mark.line + 1
                    node = value
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def parse_config(text: str, *, path: str = "<config>", env: dict[str, str] | None = None) -> Config:
    """Parse and validate configuration ``text``; errors name ``path``, the line and the key."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        if root is None:
            return Config()
        _check_nodes(root, path)
        written: dict[str, str] = {}
        _expand_node(root, path, env, written)
        data = yaml.safe_load(yaml.serialize(root))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(exc, 'problem', exc)}", path=path,
                         line=None if mark is None else mark.line + 1) from exc
    except RecursionError as exc:
        raise InputError("not valid YAML: nested too deeply", path=path) from exc
    if not isinstance(data, dict):
        raise InputError("expected a mapping at the top (rag: eval: ...)", path=path, line=1)
    try:
        config = Config.model_validate(data)
        config._source = path
        config._written = written
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        key = ".".join(str(p) for p in loc)
        if err["type"] == "extra_forbidden":
            msg = "unknown key (check the spelling; `ragmeter init` writes every key with comments)"
        else:
            msg = err["msg"]
        raise InputError(msg, path=path, line=_line_of(root, loc), field=key) from None
    _register_rubrics(config, root, path)
    return config


def _register_rubrics(config: Config, root: yaml.Node | None, path: str) -> None:
    """Register every ``rubrics:`` entry as a metric, so ``metrics:`` and ``-m NAME`` find it; an
    invalid rubric is an error naming the file, the entry's line and the field."""
    from .errors import InvalidParameterError

    for i, r in enumerate(config.eval.rubrics):
        from .metrics.generation.rubric import Rubric

        try:
            Rubric(r.name, r.criteria, tuple(r.steps), tuple(r.inputs), r.scale).register()
        except InvalidParameterError as exc:
            where = ("rag", "eval", "rubrics", i)
            raise InputError(str(exc), path=path, line=_line_of(root, where),
                             field=".".join(map(str, where))) from None


def load_config(path: str | os.PathLike[str] | None = None, *, env: dict[str, str] | None = None) -> Config:
    """Load ``path``; with None, ``./ragmeter.yaml`` if it exists, else the defaults."""
    if path is None:
        if not Path(DEFAULT_FILE).exists():
            return Config()
        path = DEFAULT_FILE
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the config file: {exc.strerror}", path=str(p)) from exc
    return parse_config(text, path=str(p), env=env)


def merge_cli(config: Config, **overrides: Any) -> EvalConfig:
    """Return the eval section with every non-None command-line override applied on top."""
    data = config.eval.model_dump(by_alias=False)
    for key, value in overrides.items():
        if value is None or value == () or value == []:
            continue
        if key == "fail_under":
            data["gate"]["fail_under"] = {**data["gate"]["fail_under"], **value}
        elif key in ("gate_statistic", "baseline", "max_error_rate", "alpha"):
            data["gate"][{"gate_statistic": "statistic"}.get(key, key)] = value
        else:
            data[key] = value
    return EvalConfig.model_validate(data)


STARTER = """\
# ragmeter configuration. `ragmeter eval DATA` picks this file up from the working directory;
# command-line flags override it. ${VAR} and ${VAR:-default} expand from the environment in the
# judge and embedder specs (the whole spec or its base URL) and cache.dir only.
rag:
  eval:
    # What to compute. As written (no `metrics`, no `preset`) the data decides: every default metric
    # its fields and the configured judge / embedder allow (the offline MiniLM embedder is used
    # when installed), the same set as `ragmeter eval DATA` with no config file.
    #   preset: retrieval  -> every retrieval metric's defaults (hit_rate@5, mrr, ndcg@5, map, ...; no LLM)
    #   preset: offline    -> every default metric that needs no judge and no embedder
    # preset: retrieval
    # metrics: [faithfulness, answer_relevancy, context_relevancy, context_recall, ndcg@5]

    # The LLM judge (`model:` and `judge:` are the same key), e.g. openai:gpt-4o-mini,
    # openai:qwen2.5@http://127.0.0.1:8080/v1, ollama:llama3.1, litellm:anthropic/claude-3-5-haiku
    # model: ${JUDGE_LLM_REF}
    # api_key_env: MY_JUDGE_KEY  # the judge's key; OPENAI_API_KEY goes only to api.openai.com / $OPENAI_BASE_URL
    # embedder: bert:all-MiniLM-L6-v2

    concurrency: auto          # judge calls in flight: auto (adapts to the endpoint, up to 16) or N (fixed)
    # extra_body: {repeat_penalty: 1.0}  # fields added to every judge request (llama-cpp-python's server: greedy)
    rate_limits:
      requests_per_minute: null
      tokens_per_minute: null
    cache:
      enabled: true            # never pay twice for the same judge call
      dir: null                # default: the user cache dir, or $RAGMETER_CACHE_DIR
    # prices:                  # USD per million tokens, overrides the built-in table
    #   gpt-4o-mini: {input: 0.15, output: 0.60, cached_input: 0.075}   # cached_input: optional
    max_cost: null             # stop scheduling judge calls once this many USD are spent
    unreachable_after: null    # stop the run (exit 3) after this many failed judge requests in a row [6]

    gate:                      # `ragmeter eval` exits 1 when a threshold is missed
      fail_under: {}           # e.g. {faithfulness: 0.8, context_recall: 0.7}
      statistic: mean          # mean, or ci_low (the lower end of the 95% interval)
      baseline: null           # a previous OUTDIR: fail only on a significant regression
      alpha: 0.05
      max_error_rate: 0.05     # exit 3 when more judge calls than this fail

    output: ragmeter-out
    on_error: raise            # or skip: record a bad input row as an errored sample and go on
    fields: {}                 # custom column -> canonical field, e.g. {question_text: query}
    # rubrics:                 # your own judged metrics (docs/generation.md), then name them in `metrics`
    #   - {name: politeness, criteria: "The answer is courteous.", inputs: [question, answer], scale: 1-5}
"""
