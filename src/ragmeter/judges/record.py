"""The judge-checks on record: what ``ragmeter judge-check`` found, kept beside the judge cache.

A check is stored in ``<cache dir>/judge-checks/<judge id>.json``, where the cache dir is the
judge's response-cache directory (``--cache-dir`` / ``$RAGMETER_CACHE_DIR`` / the user cache dir)
and the judge id is the hash of the judge's backend, model and base URL (:meth:`Judge.describe`:
no key), and of the request fields the backend adds (``extra_body``, when any, and a pinned
``structured_output`` mode). The file maps
each checked metric (canonical name, e.g. ``faithfulness(mode=direct)``) to
its latest result, with the metric's version and the versions of every judge prompt at the time,
and what it was checked against: ``label`` (the rule, e.g. ``faithful`` or ``grade>=4``) and
``label_rule``, ``user`` for a rule given with ``--label`` (``labels=``), else ``built-in``.

A run looks its judged metrics up (:func:`on_record`): a result counts only when the metric
version and every prompt version are still the same (a changed prompt can change the judge's
behaviour, so an older check no longer vouches for it); otherwise the run says the check is
stale, or that none was run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..registry import lookup_spec, resolve_name
from .label_rules import base_of

#: Sub-directory of the cache dir holding the checks.
RECORD_DIR = "judge-checks"
#: The fields of a metric's report kept on record.
KEPT = ("verdict", "auroc", "auroc_ci", "n", "n_pos", "n_neg", "errors", "reasons", "data", "label")


def prompt_versions() -> dict[str, str]:
    """``{prompt name: version}`` of every bundled judge prompt template."""
    from ..metrics.generation import prompt_versions as versions  # the metrics, loaded on first use

    return versions()


def _prompts_id(prompts: dict[str, str]) -> str:
    text = json.dumps(prompts, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def record_dir(judge: Any) -> Path:
    """Where the judge's checks are kept: its response cache's directory, else the default cache dir."""
    from .cache import default_cache_dir

    base = judge.cache.path.parent if judge.cache is not None else default_cache_dir()
    return Path(base) / RECORD_DIR


def record_path(judge: Any) -> Path:
    """The record file of ``judge`` (one per backend + model + base URL, the backend's
    ``extra_body`` when it sends one, and its structured-output mode when pinned: a check made under
    other sampling settings, e.g. the server's repeat penalty, or with the schema sent another way,
    does not vouch for this judge)."""
    ident_fields = dict(judge.describe())
    extra = getattr(judge.backend, "extra_body", None)
    if extra:
        ident_fields["extra_body"] = extra
    if getattr(judge.backend, "fixed_mode", False):
        ident_fields["structured_output"] = getattr(judge.backend, "mode", None)
    ident = json.dumps(ident_fields, sort_keys=True, separators=(",", ":"))
    return record_dir(judge) / (hashlib.sha256(ident.encode("utf-8")).hexdigest()[:16] + ".json")


def _metric_version(name: str) -> str:
    return str(resolve_name(name)[0].version)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and isinstance(data.get("metrics"), dict) else {}


def save_record(check: Any, judge: Any, *, output: str | None = None) -> Path:
    """Add the metrics of ``check`` (a :class:`~ragmeter.judges.check.JudgeCheck`) to the judge's
    record file, replacing older results of the same metrics; returns the file's path."""
    path = record_path(judge)
    data = _read(path) or {"judge": check.judge, "metrics": {}}
    data["judge_spec"] = check.judge_spec
    for rep in check.metrics:
        entry = {k: rep.get(k) for k in KEPT}
        entry.update({"label_rule": "user" if rep["metric"] in check.label_rules else "built-in",
                      "metric_version": _metric_version(rep["metric"]), "prompts": _prompts_id(check.prompts),
                      "checked": check.created, "file": output})
        data["metrics"][rep["metric"]] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
    return path


def on_record(judge: Any, metrics: Sequence[str]) -> dict[str, Any] | None:
    """What ``summary.json`` says of the judge-check for the run's judged ``metrics``: per metric
    the verdict, AUROC and interval, when it was checked and against which label (``label``, and
    ``label_rule``: ``built-in`` or ``user`` for a ``--label`` rule, so a verdict measured against
    a user's own rule is never read as the bundled one), or why there is none (``none``: never
    checked with this judge; ``stale``: checked with another metric or prompt version). ``status``
    is ``on record`` (every judged metric checked), ``partial`` or ``none``. None when no metric
    of the run is judged, or ``judge`` is not a :class:`~ragmeter.judges.Judge`."""
    from .judge import Judge

    if not isinstance(judge, Judge):
        return None
    judged = [m for m in metrics if (spec := lookup_spec(base_of(m))) is not None and spec.needs_judge]
    if not judged:
        return None
    path = record_path(judge)
    data = _read(path).get("metrics", {})
    prompts = _prompts_id(prompt_versions())
    rows, found = [], 0
    for m in judged:
        entry = data.get(m)
        version = str(resolve_name(m)[0].version)
        if entry is None:
            rows.append({"metric": m, "verdict": "none", "note": "not checked with this judge"})
        elif entry.get("metric_version") != version or entry.get("prompts") != prompts:
            rows.append({"metric": m, "verdict": "stale", "checked": entry.get("checked"),
                         "note": "checked with another metric or prompt version"})
        else:
            found += 1
            ci = entry.get("auroc_ci")
            rows.append({"metric": m, "verdict": entry.get("verdict"), "auroc": entry.get("auroc"),
                         "auroc_ci": ci, "n": entry.get("n"), "checked": entry.get("checked"),
                         "label": entry.get("label"), "label_rule": entry.get("label_rule", "built-in")})
    status = "on record" if found == len(judged) else ("partial" if found else "none")
    out: dict[str, Any] = {"status": status, "metrics": rows, "record": str(path)}
    if status != "on record":
        out["note"] = ("no judge-check on record for this judge and these prompt versions for "
                       f"{', '.join(r['metric'] for r in rows if r['verdict'] in ('none', 'stale'))}: run "
                       "`ragmeter judge-check --judge SPEC` to measure the judge on labelled rows first")
    return out
