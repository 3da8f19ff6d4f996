"""``ragmeter.evaluate``, the one entry point: a path takes the engine's own reader (the columnar
path for a file and retrieval metrics) with the output of the rows path; ``engine="auto"``; the
judge a Ray run needs; :class:`~ragmeter.io.ReadOptions` checked once."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.backend_config import JudgeConfig
from ragmeter.engines import ENGINES, entry
from ragmeter.errors import InvalidParameterError
from ragmeter.io import ReadOptions

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

ROWS = [
    {"id": "a", "contexts": [{"id": "d1"}, {"id": "d2"}, {"id": "d3"}], "relevant": ["d2"]},
    {"id": "b", "contexts": [{"id": "d4"}, {"id": "d5"}], "relevant": ["d4", "d9"]},
    {"id": "c", "contexts": [{"id": "d6"}], "relevant": ["d7"]},
]


def _files(out: Path) -> tuple[str, dict[str, Any]]:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    for key in ("started", "seconds", "engine"):
        summary["run"].pop(key, None)
    return (out / "results.jsonl").read_text(encoding="utf-8"), summary


def test_a_parquet_path_takes_the_columnar_path_and_writes_what_the_rows_path_writes(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), path)
    fast = ragmeter.evaluate(path, ["ndcg@5", "mrr"], out_dir=tmp_path / "fast")
    rows = ragmeter.evaluate(ROWS, ["ndcg@5", "mrr"], out_dir=tmp_path / "rows")
    assert fast.run["engine"]["path"] == "columnar" and "engine" not in rows.run
    assert _files(tmp_path / "fast") == _files(tmp_path / "rows")
    # by hand: a: d2 at rank 2 -> mrr 1/2; b: d4 at rank 1 -> 1; c: d7 not retrieved -> 0
    assert fast.scores["mrr"].tolist() == [0.5, 1.0, 0.0]


def test_a_path_with_a_judged_or_lexical_metric_takes_the_sample_path(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({**r, "answer": "x", "reference": "x"}) + "\n" for r in ROWS))
    run = ragmeter.evaluate(path, ["mrr", "token_f1"], out_dir=tmp_path / "o")
    assert "engine" not in run.run and run.scores["token_f1"].tolist() == [1.0, 1.0, 1.0]


def test_a_dataframe_is_read_as_rows(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    run = ragmeter.evaluate(pd.DataFrame(ROWS), ["mrr"])
    assert run.ids == ["a", "b", "c"] and run.scores["mrr"].tolist() == [0.5, 1.0, 0.0]


def test_auto_is_local_unless_ray_is_initialised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "ray", raising=False)
    assert entry.choose_engine("auto") == "local"
    fake = types.ModuleType("ray")
    fake.is_initialized = lambda: False  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray", fake)
    assert entry.choose_engine("auto") == "local"
    fake.is_initialized = lambda: True  # type: ignore[attr-defined]
    assert entry.choose_engine("auto") == "ray" and entry.choose_engine("local") == "local"
    assert entry.choose_engine("auto", judge="openai:qwen@http://127.0.0.1:9/v1") == "ray"
    # a live judge object cannot be rebuilt on the workers: auto keeps the run here instead of failing
    assert entry.choose_engine("auto", judge=object()) == "local"
    with pytest.raises(InvalidParameterError, match=f"engine: expected one of auto, {', '.join(ENGINES)}, got 'spark'"):
        entry.choose_engine("spark")


def test_auto_runs_locally_without_importing_ray() -> None:
    code = ("import sys, ragmeter\n"
            "run = ragmeter.evaluate([{'id': 'a', 'contexts': [{'id': 'x'}], 'relevant': ['x']}], ['mrr'])\n"
            "print(run.scores['mrr'].tolist(), 'ray' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["[1.0]", "False"]


class _JudgeObject:
    async def acomplete(self, *a: Any) -> None:  # pragma: no cover - never called
        raise AssertionError


def test_a_judge_object_on_ray_is_a_clear_error() -> None:
    with pytest.raises(InvalidParameterError, match=r"judge: expected a spec string or a JudgeConfig for "
                                                    r"engine='ray', got a _JudgeObject object"):
        ragmeter.evaluate(ROWS, ["faithfulness"], engine="ray", judge=_JudgeObject())


def test_a_judge_for_ray_is_a_config_however_given() -> None:
    config = JudgeConfig("openai:m@http://127.0.0.1:1/v1", concurrency=2)
    holder = types.SimpleNamespace(config=config)
    assert entry._ray_config(config, "judge", JudgeConfig, None) is config
    assert entry._ray_config(holder, "judge", JudgeConfig, None) is config
    assert entry._ray_config("openai:m", "judge", JudgeConfig, None) == JudgeConfig("openai:m")
    assert entry._ray_config(None, "judge", JudgeConfig, None) is None


@pytest.mark.parametrize(("field", "value", "message"), [
    ("on_error", "ignore", "on_error: expected 'raise' or 'skip', got 'ignore'"),
    ("max_text_chars", -1, "max_text_chars: expected None or an integer >= 0 (0: no limit), got -1"),
    ("max_text_chars", True, "max_text_chars: expected None or an integer >= 0 (0: no limit), got True"),
    ("format", "xml", "format: expected one of jsonl, json, csv, parquet, otel, got 'xml'"),
    ("field_map", {"q": "question_id"}, "field_map: 'q' -> 'question_id': expected a target among"),
])
def test_read_options_name_the_bad_field(field: str, value: Any, message: str) -> None:
    with pytest.raises(InvalidParameterError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        ReadOptions(**{field: value})


def test_read_options_are_frozen_and_canonical() -> None:
    opts = ReadOptions(format=".NDJSON", max_text_chars=0, field_map={"question": "user_input"})
    assert (opts.format, opts.max_text_chars, dict(opts.field_map)) == ("jsonl", None, {"question": "query"})
    with pytest.raises(AttributeError):
        opts.on_error = "skip"  # type: ignore[misc]


def test_read_options_or_keywords_not_both(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n{\n")
    run = ragmeter.evaluate(path, ["mrr"], read=ReadOptions(on_error="skip"))
    assert run.run["input_errors"] == 1
    with pytest.raises(InvalidParameterError, match=r"read: expected the read options once.*\(read= and on_error=\)"):
        ragmeter.evaluate(path, ["mrr"], read=ReadOptions(), on_error="skip")


def test_the_aliases_warn_and_run_the_entry(tmp_path: Path) -> None:
    from ragmeter.engines.local import evaluate_file

    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), path)
    with pytest.warns(DeprecationWarning, match="evaluate_file is deprecated: call ragmeter.evaluate"):
        evaluate_file(path, ["mrr"], out_dir=tmp_path / "alias")
    ragmeter.evaluate(path, ["mrr"], out_dir=tmp_path / "entry")
    assert _files(tmp_path / "alias") == _files(tmp_path / "entry")
