"""The Ray engine against the local engine, on a real local Ray cluster: same files, same scores,
judged metrics through the loopback server, and a worker killed mid-task."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

from ragmeter import evaluate, registry
from ragmeter.backend_config import JudgeConfig
from ragmeter.errors import MissingBackendError
from ragmeter.io import read_samples
from tests.metrics.generation.rules import judge_rule

ray_engine = pytest.importorskip("ragmeter.engines.ray_engine")

RETRIEVAL = ["mrr", "ndcg@3", "recall@2", "map"]


def _rows(n: int = 60) -> list[dict]:
    """Hand-made rows: ids or texts, graded labels, empty contexts, no labels, a reference."""
    rows = []
    for i in range(n):
        ctx = [{"id": f"d{(i + j) % 7}", "text": f"passage {(i + j) % 7} [rating {(i + j) % 11}]"}
               for j in range(i % 5)]
        row = {"id": f"q{i}", "query": f"question {i}?", "answer": f"Answer {i}. passage {i % 7}.",
               "contexts": ctx}
        if i % 4 == 0:
            row["relevant"] = {f"d{i % 7}": 2, f"d{(i + 3) % 7}": 1}
        elif i % 4 == 1:
            row["relevant"] = [f"d{(i + 1) % 7}"]
        elif i % 4 == 2:
            row["reference"] = f"passage {(i + 1) % 7}"
        rows.append(row)
    return rows


def _write_jsonl(path: Path, rows: list[dict], extra_lines: dict[int, str] | None = None) -> Path:
    lines = [json.dumps(r) for r in rows]
    for at, text in sorted((extra_lines or {}).items()):
        lines.insert(at, text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _lines(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def test_retrieval_metrics_equal_local_with_bad_rows(ray_cluster, tmp_path):
    data = _write_jsonl(tmp_path / "d.jsonl", _rows(),
                        {5: "{not json", 17: json.dumps({"id": "q3", "contexts": []})})  # bad + duplicate id
    local = evaluate(read_samples(data, on_error="skip"), RETRIEVAL, out_dir=str(tmp_path / "local"),
                     keep_records=False, engine="local")
    bad: list[str] = []
    run = evaluate(data, RETRIEVAL, engine="ray", out_dir=tmp_path / "ray", on_error="skip", chunk_size=7,
                                  on_bad_row=lambda e: bad.append(str(e)))
    assert (tmp_path / "ray" / "results.jsonl").read_bytes() == (tmp_path / "local" / "results.jsonl").read_bytes()
    assert run.ids == local.ids and len(run) == 62
    assert run.ids[5] == f"{data}:6"  # the malformed line, recorded where it was
    assert len(bad) == 2 and "duplicate sample id 'q3'" in bad[1]
    ray_summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    local_summary = json.loads((tmp_path / "local" / "summary.json").read_text())
    assert ray_summary["metrics"] == local_summary["metrics"]
    assert ray_summary["metrics"]["mrr"]["errors"] == 2
    # the results came back through the driver's writer: no side files
    assert sorted(p.name for p in (tmp_path / "ray").iterdir()) == ["results.jsonl", "summary.json"]


def test_rows_without_ids_are_numbered_from_1_as_evaluate_numbers_them(ray_cluster, tmp_path):
    rows = [{"contexts": [{"id": "a"}, {"id": "b"}], "relevant": ["b"]}, {"contexts": [{"id": "b"}], "relevant": ["b"]}]
    run = evaluate(rows, ["mrr"], engine="ray", chunk_size=1)
    assert run.ids == ["1", "2"] == evaluate(rows, ["mrr"], engine="local").ids


def test_parquet_read_with_ray_data(ray_cluster, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [{"contexts": [{"id": "a"}, {"id": "b"}], "relevant": ["b"]},
            {"contexts": [{"id": "b"}], "relevant": ["c"]},
            {"contexts": [], "relevant": ["a"]}]
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    run = evaluate(path, ["mrr", "recall"], engine="ray", out_dir=tmp_path / "ray", chunk_size=2)
    assert run.ids == ["1", "2", "3"]  # no id column: the row number, as the local reader gives
    assert run.scores["mrr"].tolist() == [0.5, 0.0, 0.0]
    local = evaluate(read_samples(path), ["mrr", "recall"], out_dir=str(tmp_path / "local"), keep_records=False,
                     engine="local")
    assert (tmp_path / "ray" / "results.jsonl").read_text() == (tmp_path / "local" / "results.jsonl").read_text()
    assert local.ids == run.ids


def test_judged_metric_equal_local_from_the_same_cache(ray_cluster, fake_llm, judge_cache_dir, make_judge,
                                                       tmp_path):
    fake_llm.rule = judge_rule
    rows = [r for r in _rows(24) if r["contexts"]]
    data = _write_jsonl(tmp_path / "d.jsonl", rows)
    metrics = ["context_relevancy(scale=graded)", "faithfulness", "mrr"]  # graded: one call, a 0-10 rating per chunk
    judge = make_judge(cache=True)
    local = evaluate(read_samples(data), metrics, judge=judge, out_dir=str(tmp_path / "local"), keep_records=False,
                     engine="local")
    served = len(fake_llm.log)
    assert served > 0 and local.status["context_relevancy(scale=graded)"].tolist().count(0) == len(rows)
    run = evaluate(data, metrics, engine="ray",
                   judge=JudgeConfig(f"openai:fake-model@{fake_llm.url}", timeout=5.0, concurrency=4),
                   out_dir=tmp_path / "ray", chunk_size=5)
    assert len(fake_llm.log) == served  # every judgement came from the shared cache
    assert (tmp_path / "ray" / "results.jsonl").read_text() == (tmp_path / "local" / "results.jsonl").read_text()
    assert run.run["judge"]["cache_hits"] >= served and run.run["judge"]["calls"] == local.run["judge"]["calls"]
    # a hand check of one judged score: ratings come from "[rating N]" in each passage (0-10 -> /10)
    i = next(k for k, r in enumerate(rows) if len(r["contexts"]) == 2)
    ratings = [int(c["text"].split("[rating ")[1].rstrip("]")) for c in rows[i]["contexts"]]
    assert run.scores["context_relevancy(scale=graded)"][i] == pytest.approx(sum(ratings) / 2 / 10)


def test_judged_metric_live_on_workers(ray_cluster, fake_llm, tmp_path):
    fake_llm.rule = judge_rule
    rows = [r for r in _rows(12) if r["contexts"]]
    run = evaluate(rows, ["context_relevancy(scale=graded)"], engine="ray",
                   judge=JudgeConfig(f"openai:fake-model@{fake_llm.url}", timeout=5.0, cache=False),
                   chunk_size=4, num_workers=2)
    assert len(fake_llm.log) == len(rows)  # one rate_chunks call per sample, made by the workers
    assert run.run["judge"]["calls"] == len(rows) and run.run["engine"]["workers"] == 2
    assert [r["id"] for r in run.records] == [r["id"] for r in rows]


def test_a_killed_worker_is_retried_without_losing_or_duplicating_samples(ray_cluster, tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))
    sys.modules.pop("tests.engines.crash_metric", None)
    importlib.import_module("tests.engines.crash_metric")  # registers crash_once in the patched registry
    marker = tmp_path / "crashed"
    rows = [{"id": f"s{i}", "contexts": [{"id": f"d{j}"} for j in range(i % 4)], "relevant": ["d1"],
             **({"metadata": {"crash_marker": str(marker)}} if i == 13 else {})} for i in range(30)]
    run = evaluate(rows, ["crash_once", "hit_rate"], engine="ray", out_dir=tmp_path / "out", chunk_size=4,
                                  metric_modules=["tests.engines.crash_metric"], max_retries=2)
    assert marker.exists()  # a worker really died on sample s13
    assert run.ids == [f"s{i}" for i in range(30)]
    assert run.scores["crash_once"].tolist() == [float(i % 4) for i in range(30)]
    assert run.scores["hit_rate"].tolist() == [1.0 if i % 4 >= 2 else 0.0 for i in range(30)]
    assert len((tmp_path / "out" / "results.jsonl").read_text().splitlines()) == 30


def test_without_ray_the_engine_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without the extra looks like
    with pytest.raises(MissingBackendError, match=r'pip install -e "\.\[ray\]" \(in the ragmeter clone\)'):
        evaluate([{"id": "a", "contexts": [{"id": "x"}], "relevant": ["x"]}], ["mrr"], engine="ray")


def test_cli_engine_ray_writes_what_the_local_engine_writes(ray_cluster, tmp_path):
    from click.testing import CliRunner

    from ragmeter.cli import main

    data = _write_jsonl(tmp_path / "d.jsonl", _rows(30))
    runner = CliRunner()
    a = runner.invoke(main, ["eval", str(data), "-m", "mrr", "-m", "ndcg@3", "-o", str(tmp_path / "l"), "-q",
                             "--no-report"], catch_exceptions=False)
    b = runner.invoke(main, ["eval", str(data), "-m", "mrr", "-m", "ndcg@3", "-o", str(tmp_path / "r"), "-q",
                             "--no-report", "--engine", "ray"], catch_exceptions=False)
    assert a.exit_code == 0 and b.exit_code == 0, (a.output, b.output)
    assert (tmp_path / "r" / "results.jsonl").read_text() == (tmp_path / "l" / "results.jsonl").read_text()
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["run"]["engine"]["name"] == "ray"


def test_cli_engine_ray_stops_on_an_unreachable_judge_keeping_the_rows_done(ray_cluster, tmp_path):
    # before: each chunk's judge on the workers found the server down anew and the driver went on
    # through every chunk; now the first row whose judge declared itself unreachable stops the
    # run (exit 3, one line with the masked URL), the rows before it written, the rest cancelled
    import socket

    from click.testing import CliRunner

    from ragmeter.cli import main

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    rows = [{"id": f"r{i}", "query": f"q{i}?", "answer": f"Answer {i}.",
             "contexts": [{"id": "d1", "text": f"Answer {i}."}], "relevant": ["d1"]} for i in range(2600)]
    data = _write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness", "-m", "mrr", "--judge",
                                    f"openai:m@http://admin:hunter22@127.0.0.1:{port}/v1", "-o", str(out),
                                    "--no-report", "--engine", "ray", "-q"], catch_exceptions=False)
    assert res.exit_code == 3, res.output
    assert "hunter22" not in res.output
    [line] = [ln for ln in res.output.splitlines() if "unreachable" in ln]
    assert f"http://***@127.0.0.1:{port}/v1" in line
    done = _lines(out)
    assert 1 <= len(done) < 512  # stopped in the first chunk, at the row that declared it
    assert done[-1]["metrics"]["faithfulness"]["error"]["type"] == "JudgeUnreachable"
    assert [r["id"] for r in done] == [f"r{i}" for i in range(len(done))]
    assert all(r["metrics"]["mrr"]["score"] == 1.0 for r in done)
    assert all(r["metrics"]["faithfulness"]["error"]["type"] in ("JudgeConnectionError", "JudgeUnreachable")
               for r in done)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["aborted"]["type"] == "JudgeUnreachable"
    assert summary["run"]["engine"]["name"] == "ray"


def test_a_bad_row_with_on_error_raise_keeps_the_chunks_sent_before_it(ray_cluster, tmp_path):
    from ragmeter.errors import InputError

    rows = [{"id": f"r{i}", "contexts": [{"id": "d1"}], "relevant": ["d1"]} for i in range(30)]
    data = _write_jsonl(tmp_path / "d.jsonl", rows, {20: "{bad json"})  # line 21, in the 5th chunk of 5
    with pytest.raises(InputError, match=r"d\.jsonl:21: malformed JSON"):
        evaluate(data, ["mrr"], engine="ray", out_dir=tmp_path / "o", chunk_size=5)
    assert [r["id"] for r in _lines(tmp_path / "o")] == [f"r{i}" for i in range(20)]
    aborted = json.loads((tmp_path / "o" / "summary.json").read_text())["run"]["aborted"]
    assert (aborted["type"], aborted["line"]) == ("InputError", 21)


def test_cli_engine_ray_without_ray_is_a_usage_error(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from ragmeter.cli import main

    data = _write_jsonl(tmp_path / "d.jsonl", _rows(3))
    monkeypatch.setitem(sys.modules, "ray", None)
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "mrr", "-o", str(tmp_path / "o"), "--engine", "ray"])
    assert res.exit_code == 2
    assert 'pip install -e ".[ray]" (in the ragmeter clone)' in res.output


def test_jsonl_uri_read_with_ray_data(ray_cluster, tmp_path):
    rows = [{"id": f"u{i}", "contexts": [{"id": f"d{j}"} for j in range(i % 3 + 1)], "relevant": [f"d{i % 3}"]}
            for i in range(9)]
    data = _write_jsonl(tmp_path / "d.jsonl", rows)
    run = evaluate(data.as_uri(), ["mrr"], engine="ray", out_dir=tmp_path / "ray", chunk_size=4)
    assert run.ids == [f"u{i}" for i in range(9)]
    assert run.scores["mrr"].tolist() == [1.0, 0.5, 1 / 3] * 3  # label d(i%3) sits at rank i%3+1
    local = evaluate(read_samples(data), ["mrr"], out_dir=str(tmp_path / "local"), keep_records=False, engine="local")
    assert local.ids == run.ids
    assert (tmp_path / "ray" / "results.jsonl").read_text() == (tmp_path / "local" / "results.jsonl").read_text()


def _corrupt_group(path: Path, group: int) -> None:
    """Overwrite the page header of row group ``group``'s first column chunk with 0xFF bytes:
    reading that group fails (Arrow cannot decode the header), the footer and the others read."""
    import pyarrow.parquet as pq

    col = pq.ParquetFile(path).metadata.row_group(group).column(0)
    at = col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset
    data = bytearray(path.read_bytes())
    data[at:at + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("share_files", [True, False])
def test_an_unreadable_row_group_fails_as_the_local_engine_words_it(ray_cluster, tmp_path, monkeypatch, share_files):
    """Row group 3 of 5 (rows 241-360) cannot be decoded: read by a worker (one machine) or by the
    driver, the run stops with the local engine's InputError, naming the file and row 241."""
    pytest.importorskip("pyarrow")
    from ragmeter.engines import _ray_columnar
    from ragmeter.errors import InputError
    from tests.engines.test_engines_identical import _generated, _to_parquet

    path = _to_parquet([dict(r) for r in _generated(600, seed=5)], tmp_path / "bad.parquet", 120)
    _corrupt_group(path, 2)
    with pytest.raises(InputError) as local:
        evaluate(path, RETRIEVAL, out_dir=tmp_path / "local", engine="local")
    if not share_files:
        monkeypatch.setattr(_ray_columnar, "_workers_share_files", lambda ray: False)
    with pytest.raises(InputError) as ray:
        evaluate(path, RETRIEVAL, engine="ray", out_dir=tmp_path / "ray", num_workers=2)
    assert str(path) in str(ray.value) and "cannot read the Parquet file after row 240" in str(ray.value)
    assert ray.value.line == local.value.line == 241
    assert str(ray.value).split(": ")[:2] == str(local.value).split(": ")[:2]


def test_judged_run_on_a_one_slot_server_keeps_one_adaptive_limit_per_actor(ray_cluster, tmp_path):
    # before: every 512-row task built its judge anew, so adaptive concurrency started again (and
    # probed the server again) on every chunk and the learnt timeout was forgotten
    from ragmeter.backend_config import JudgeConfig
    from tests.judges.fake_server import FakeLLMServer

    class CountingServer(FakeLLMServer):
        probes = 0

        async def _props(self, request):  # type: ignore[no-untyped-def]
            type(self).probes += 1  # a judge's adaptive limit asks once, when it is built
            return await super()._props(request)

    rows = _rows(16)
    with CountingServer(judge_rule, latency=0.05, slots=1, props=True) as server:
        run = evaluate(rows, ["faithfulness"], engine="ray", chunk_size=4, num_workers=1, out_dir=tmp_path / "o",
                                      judge=JudgeConfig(f"openai:fake-model@{server.url}", cache=False,
                                                               timeout=10.0))
        abandoned = server.abandoned
    assert CountingServer.probes == 1  # four chunks, one actor, one judge and one limit for the run
    judge = run.run["judge"]
    assert judge["errors"] == {} and judge["attempt_errors"] == {} and abandoned == 0  # no timeout
    assert run.summary()["faithfulness"]["n"] == 16 and run.summary()["faithfulness"]["errors"] == 0
