"""The fault matrix: a faulty judge, hostile inputs, secrets and kill -9 against ``ragmeter eval``.

    PYTHONPATH=src python bench/fault_matrix.py [--rows 14] [--port 18900] [--out bench/results/fault_matrix.json]

1. Faults: runs ``python -m ragmeter eval`` on ``--rows`` rows of the judge validation set (markers
   added so the rule-based judge of ``tests/metrics/generation/rules.py`` gives varied scores) with
   faithfulness, answer_relevancy, context_relevancy, correctness and mrr against a fault-free
   loopback judge, then against the same judge with one fault injected per run. A prompt's fault
   is chosen by a hash of the prompt: 1 in 6 prompts get it on every attempt, 2 in 6 on the first
   attempt only, the rest never. Every (sample, metric) is compared with the fault-free run: the
   same number, or an error/undefined, else a *silently wrong number*.
2. Hostile inputs: ~50 bad files (JSONL, CSV, Parquet) through ``eval -m mrr``: exit 0 or 2 (exit 2
   with the file's name and a line/row/field in stderr), never 4, outputs strict JSON.
3. Leaks: secrets in the environment and in the judge URL; every output file, the cache dir,
   stdout and stderr are searched for them.
4. kill -9: SIGKILL at ~25/50/75 % of the judge calls; every results.jsonl line must parse; a
   re-run with the same cache must not ask again a call answered before the kill.
Exit 0 when there is no silently wrong number, crash or leak; the summary is written as strict JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from tests.judges.fake_server import ChatCall, FakeLLMServer, Reply  # noqa: E402
from tests.metrics.generation.rules import judge_rule  # noqa: E402

METRICS = ["faithfulness", "answer_relevancy", "context_relevancy", "correctness", "mrr"]
SECRETS = {"OPENAI_API_KEY": "sk-secret-CANARY0451", "AWS_SECRET_ACCESS_KEY": "aws-CANARY-9f3e1c"}
URL_PASSWORD = "urlpass-CANARY77"


def _strict(text: str) -> Any:
    def bad(const: str) -> Any:
        raise ValueError(f"non-finite constant {const}")
    return json.loads(text, parse_constant=bad)


def strict_outputs(out: Path) -> list[str]:
    """Output files that are not strict JSON (results.jsonl line by line)."""
    bad = []
    for f in sorted(out.glob("*.json*")) if out.is_dir() else []:
        try:
            lines = f.read_text().splitlines() if f.suffix == ".jsonl" else [f.read_text()]
            for line in lines:
                _strict(line)
        except (ValueError, UnicodeDecodeError) as exc:
            bad.append(f"{f.name}: {exc}")
    return bad


def marker(key: str, mod: int = 10) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % mod


def dataset(n: int) -> list[dict[str, Any]]:
    """Validation rows with "[rating N]" markers; half the rows' answers are copied into a context."""
    src = ROOT / "src/ragmeter/data/validation/judge_validation.jsonl"
    rows = []
    for line in src.read_text().splitlines()[:n]:
        r = json.loads(line)
        answer = f"[rating {marker(r['id'] + 'a')}] {r['answer']}"
        ctx = [f"[rating {marker(r['id'] + str(i))}] {c}" for i, c in enumerate(r["contexts"])]
        if marker(r["id"], 2):
            ctx[0] += " " + answer
        rows.append({"id": r["id"], "query": r["query"], "answer": answer, "reference": r["reference"],
                     "contexts": [{"id": f"d{i}", "text": c} for i, c in enumerate(ctx)],
                     "relevant": [f"d{marker(r['id'] + 'rel', len(ctx))}"]})
    return rows


def _lp(token: str, value: float) -> list[dict[str, Any]]:
    other = "no" if token.strip().lower() == "yes" else "yes"
    return [{"token": token, "logprob": value,
             "top_logprobs": [{"token": token, "logprob": value}, {"token": other, "logprob": -math.inf}]}]


def faulted(clean: Reply | dict[str, Any], fault: str) -> Reply:
    """The reply ``clean`` with ``fault`` injected."""
    text = clean.content or "" if isinstance(clean, Reply) else json.dumps(clean)
    simple = {"429": Reply.rate_limited(retry_after=0), "429_no_retry_after": Reply.rate_limited(retry_after=None),
              "500": Reply.server_error(500), "503": Reply.server_error(503), "drop": Reply.dropped(),
              "garbage": Reply(raw_body=b"\x00\xffnot json{{", kind="garbage"),
              "prose": Reply.malformed("Looks good to me overall, I would say 4 out of 5."),
              "timeout": Reply.hanging(6.0), "wrong_shape": Reply.json({"score": 5}, kind="wrong_shape"),
              "empty_choices": Reply(raw_body=b'{"choices": [], "usage": {}}', kind="empty")}
    if fault in simple:
        return simple[fault]
    if fault == "cut":
        return Reply(content=text[: max(1, len(text) // 2)], finish_reason="length", kind="truncated")
    if fault == "slow":
        return Reply(content=text, delay=1.0, kind="slow")
    if fault == "negative_usage":
        return Reply(content=text, usage=(-50, -7), kind="neg_usage")
    if fault in ("nan_logprobs", "inf_logprobs"):
        return Reply(content=text, logprobs=_lp(text, math.nan if fault == "nan_logprobs" else math.inf),
                     kind=fault)
    raise ValueError(fault)


FAULTS = ["429", "429_no_retry_after", "500", "503", "drop", "garbage", "cut", "prose", "slow", "timeout",
          "nan_logprobs", "inf_logprobs", "wrong_shape", "negative_usage", "empty_choices"]


def fault_rule(fault: str | None):
    attempts: Counter[str] = Counter()

    def rule(call: ChatCall) -> Any:
        clean = judge_rule(call)
        key = f"{call.schema_name}|{call.user_text}"
        n = attempts[key]
        attempts[key] += 1
        h = marker(key, 6)
        if fault is None or h > 2 or (h > 0 and n > 0):
            return clean
        return faulted(clean, fault)
    return rule


def eval_cmd(data: Path, out: Path, cache: Path, url: str, metrics: list[str], extra: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "ragmeter", "eval", str(data), "-o", str(out), "--no-report",
           "--cache-dir", str(cache), "--no-embedder", "--format", "json", "--judge-timeout", "3",
           "--judge-retries", "3", "--max-error-rate", "1"]
    for m in metrics:
        cmd += ["-m", m]
    return cmd + (["--judge", f"openai:m@{url}"] if url else []) + extra


def env(extra: dict[str, str] | None = None) -> dict[str, str]:
    e = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OPENAI_API_KEY": "sk-test"}
    return {**e, **(extra or {})}


def run(cmd: list[str], extra_env: dict[str, str] | None = None, timeout: float = 180) -> dict[str, Any]:
    p = subprocess.run(cmd, capture_output=True, text=True, env=env(extra_env), timeout=timeout,
                       errors="replace")
    return {"exit": p.returncode, "stdout": p.stdout, "stderr": p.stderr,
            "crash": p.returncode not in (0, 1, 2, 3) or "Traceback" in p.stderr}


def scores(out: Path) -> dict[tuple[str, str], Any]:
    """(sample id, metric) -> its score, or "error" / "undefined"."""
    got: dict[tuple[str, str], Any] = {}
    path = out / "results.jsonl"
    for line in path.read_text().splitlines() if path.exists() else []:
        rec = _strict(line)
        for m, r in (rec.get("metrics") or {}).items():
            got[(rec["id"], m)] = "error" if r.get("error") else ("undefined" if r.get("score") is None else r["score"])
    return got


def aborted(out: Path) -> Any:
    """The summary's ``run.aborted`` (why the run stopped early), or None."""
    path = out / "summary.json"
    return (_strict(path.read_text()).get("run") or {}).get("aborted") if path.exists() else "no summary.json"


def fault_matrix(tmp: Path, port: int, rows: int) -> dict[str, Any]:
    data = tmp / "judged.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in dataset(rows)))
    server = FakeLLMServer(fault_rule(None), port=port).start()
    scenarios: list[dict[str, Any]] = []
    wrong: list[dict[str, Any]] = []
    try:
        base_out = tmp / "base"
        res = run(eval_cmd(data, base_out, tmp / "c-base", server.url, METRICS, []))
        base = scores(base_out)
        scenarios.append({"scenario": "fault-free", "exit": res["exit"], "crash": res["crash"],
                          "calls": len(server.log), "errors": sum(v == "error" for v in base.values()),
                          "non_strict_json": strict_outputs(base_out)})
        for fault in FAULTS:
            server.rule = fault_rule(fault)
            server.clear_log()
            out = tmp / f"f-{fault}"
            t0 = time.perf_counter()
            res = run(eval_cmd(data, out, tmp / f"c-{fault}", server.url, METRICS, []))
            got = scores(out)
            counts = Counter()
            for key, expected in base.items():
                value = got.get(key, "missing")
                if value == expected:
                    counts["identical"] += 1
                elif value in ("error", "undefined", "missing"):
                    counts[value] += 1
                else:
                    counts["silently_wrong"] += 1
                    wrong.append({"scenario": fault, "sample": key[0], "metric": key[1],
                                  "expected": expected, "got": value})
            scenarios.append({"scenario": fault, "exit": res["exit"], "crash": res["crash"],
                              "seconds": round(time.perf_counter() - t0, 1), "calls": len(server.log),
                              "injected": sum(e.kind not in ("ok",) for e in server.log), **counts,
                              "non_strict_json": strict_outputs(out), "aborted": aborted(out),
                              **({"stderr_tail": res["stderr"][-800:]} if res["crash"] else {})})
            print(json.dumps(scenarios[-1]), flush=True)
    finally:
        server.stop()
    return {"scenarios": scenarios, "silently_wrong": wrong, "data": str(data), "baseline": base}


def _rows_csv(rows: list[list[str]]) -> str:
    return "".join(",".join(r) + "\n" for r in rows)


def hostile_files(d: Path) -> list[Path]:
    good = {"id": "a", "query": "q?", "answer": "x.", "contexts": [{"id": "d1", "text": "t"}], "relevant": ["d1"]}
    g = json.dumps(good)
    jl: dict[str, bytes | str] = {
        "empty": "", "only_newlines": "\n\n\n", "bad_json_line": g + "\n{\"id\": \"b\", \n", "not_object": "[1,2]\n",
        "scalar_line": "42\n", "null_line": "null\n", "bom": "\ufeff" + g + "\n",
        "invalid_utf8": b'{"id": "a\xff\xfe"}\n',
        "nan_in_field": g[:-1] + ', "score": NaN}\n', "infinity_token": '{"id": Infinity}\n',
        "huge_int_id": json.dumps({**good, "id": 10**400}) + "\n",
        "huge_int_field": g[:-1] + ', "metadata": {"n": 1' + "0" * 5000 + "}}\n",
        "dup_ids": g + "\n" + g + "\n", "id_null": json.dumps({**good, "id": None}) + "\n",
        "id_list": json.dumps({**good, "id": [1]}) + "\n", "query_int": json.dumps({**good, "query": 5}) + "\n",
        "query_missing": json.dumps({k: v for k, v in good.items() if k != "query"}) + "\n",
        "contexts_string": json.dumps({**good, "contexts": "just text"}) + "\n",
        "contexts_nested": json.dumps({**good, "contexts": [[["x"]]]}) + "\n",
        "contexts_null_item": json.dumps({**good, "contexts": [None]}) + "\n",
        "context_no_text": json.dumps({**good, "contexts": [{"id": "d1"}]}) + "\n",
        "context_score_nan": g.replace('"text": "t"', '"text": "t", "score": NaN') + "\n",
        "context_score_str": json.dumps({**good, "contexts": [{"id": "d1", "text": "t", "score": "high"}]}) + "\n",
        "context_score_huge": json.dumps({**good, "contexts": [{"id": "d1", "text": "t", "score": 1e309}]}) + "\n",
        "relevant_dict": json.dumps({**good, "relevant": {"d1": "very"}}) + "\n",
        "relevant_grade_nan": g.replace('"relevant": ["d1"]', '"relevant": {"d1": NaN}') + "\n",
        "relevant_grade_huge": json.dumps({**good, "relevant": {"d1": 10**30}}) + "\n",
        "relevant_grade_neg": json.dumps({**good, "relevant": {"d1": -3}}) + "\n",
        "relevant_bool": json.dumps({**good, "relevant": True}) + "\n",
        "metadata_list": json.dumps({**good, "metadata": [1, 2]}) + "\n",
        "deep_nesting_5k": g[:-1] + ', "metadata": {"x": ' + "[" * 5000 + "]" * 5000 + "}}\n",
        "deep_nesting_20k": g[:-1] + ', "metadata": {"x": ' + "[" * 20000 + "]" * 20000 + "}}\n",
        "huge_text_10mb": json.dumps({**good, "answer": "word " * 2_100_000}) + "\n",
        "nul_chars": json.dumps({**good, "query": "a\x00b"}) + "\n",
        "lone_surrogate": '{"id": "a", "query": "\\ud800", "contexts": [], "relevant": []}\n',
        "crlf_lines": (g + "\r\n") * 2, "trailing_garbage": g + " trailing\n", "two_objects_one_line": g + g + "\n",
        "empty_contexts_and_relevant": json.dumps({**good, "contexts": [], "relevant": []}) + "\n",
        "id_empty_string": json.dumps({**good, "id": ""}) + "\n",
        "unknown_fields": json.dumps({**good, "zz": 1}) + "\n",
    }
    files = []
    for name, body in jl.items():
        p = d / f"{name}.jsonl"
        p.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass"))
        files.append(p)
    csvs: dict[str, bytes | str] = {
        "csv_empty": "", "csv_header_only": "id,query,answer\n",
        "csv_unclosed_quote": 'id,query,contexts,relevant\na,"oops,[],[]\n',
        "csv_ragged": "id,query,answer\na,q\nb,q,x,extra\n",
        "csv_contexts_bad_json": 'id,query,contexts\na,q,"[{bad"\n',
        "csv_bom": "\ufeffid,query,contexts,relevant\na,q,\"[\"\"t\"\"]\",\"[\"\"d1\"\"]\"\n",
        "csv_invalid_utf8": b"id,query\na,\xff\xfe\n", "csv_dup_header": "id,id,query\na,b,q\n",
        "csv_nan_relevant": 'id,query,contexts,relevant\na,q,"[{""id"":""d1"",""text"":""t""}]","{""d1"": NaN}"\n',
        "csv_embedded_newlines": 'id,query,contexts,relevant\na,"line1\nline2",'
                                 '"[{""id"":""d1"",""text"":""t""}]","[""d1""]"\n',
    }
    for name, body in csvs.items():
        p = d / f"{name}.csv"
        p.write_bytes(body if isinstance(body, bytes) else body.encode())
        files.append(p)
    ctx = pa.list_(pa.struct([("id", pa.string()), ("text", pa.string())]))
    one = [{"id": "d", "text": "t"}]
    tables = {
        "pq_nulls": pa.table({"id": ["a", None], "query": [None, "q"], "contexts": pa.array([None, one], ctx),
                              "relevant": pa.array([["d"], None], pa.list_(pa.string()))}),
        "pq_int_query": pa.table({"id": ["a"], "query": [7], "contexts": pa.array([one], ctx)}),
        "pq_nan_score": pa.table({"id": ["a"], "query": ["q"], "contexts": pa.array([one], ctx),
                                  "relevant": pa.array([[("d", float("nan"))]], pa.map_(pa.string(), pa.float64()))}),
        "pq_empty": pa.table({"id": pa.array([], pa.string()), "query": pa.array([], pa.string())}),
        "pq_dup_ids": pa.table({"id": ["a", "a"], "query": ["q", "q"], "contexts": pa.array([one] * 2, ctx),
                                "relevant": [["d"], ["d"]]}),
    }
    for name, t in tables.items():
        p = d / f"{name}.parquet"
        pq.write_table(t, p)
        files.append(p)
    (d / "pq_not_parquet.parquet").write_bytes(b"PAR1 this is not parquet")
    return [*files, d / "pq_not_parquet.parquet"]


def hostile(tmp: Path) -> dict[str, Any]:
    d = tmp / "hostile"
    d.mkdir()
    out: list[dict[str, Any]] = []
    for f in hostile_files(d):
        o = tmp / "h-out" / f.stem
        res = run(eval_cmd(f, o, tmp / "h-cache", "", ["mrr"], []), timeout=120)
        err = res["stderr"]
        named = f.name in err and bool(re.search(r"line|row|field|column|byte|empty", err, re.I))
        out.append({"file": f.name, "exit": res["exit"], "crash": res["crash"], "ok_exit": res["exit"] in (0, 2),
                    "error_names_file_and_place": named if res["exit"] == 2 else None,
                    "non_strict_json": strict_outputs(o),
                    "stderr_head": err.strip().splitlines()[0][:300] if err.strip() else ""})
    return {"files": len(out), "crashes": sum(r["crash"] for r in out), "bad_exit": sum(not r["ok_exit"] for r in out),
            "exit2_without_place": sum(r["error_names_file_and_place"] is False for r in out),
            "non_strict_json": sum(bool(r["non_strict_json"]) for r in out), "runs": out}


def leaks(tmp: Path, port: int) -> dict[str, Any]:
    """A run with secrets in the environment and the judge URL (some calls fail with 500, so errors
    are written too); every byte it leaves is searched for the secrets."""
    data = tmp / "judged.jsonl"
    server = FakeLLMServer(fault_rule("500"), port=port).start()
    try:
        url = server.url.replace("http://", f"http://judgeuser:{URL_PASSWORD}@")
        out, cache = tmp / "leak-out", tmp / "leak-cache"
        res = run(eval_cmd(data, out, cache, url, METRICS, []), SECRETS)
        res_bad_url = run(eval_cmd(data, tmp / "leak-out2", cache, "http://u:" + URL_PASSWORD + "@127.0.0.1:1/v1",
                                   ["faithfulness"], ["--judge-retries", "0"]), SECRETS)
    finally:
        server.stop()
    needles = [v.encode() for v in SECRETS.values()] + [URL_PASSWORD.encode()]
    found = []
    for name, blob in [("stdout", res["stdout"]), ("stderr", res["stderr"]),
                       ("stdout(unreachable)", res_bad_url["stdout"]), ("stderr(unreachable)", res_bad_url["stderr"])]:
        found += [f"{name}: {n.decode()}" for n in needles if n in blob.encode()]
    searched = 0
    for root in (out, cache, tmp / "leak-out2"):
        for f in root.rglob("*") if root.exists() else []:
            if f.is_file():
                searched += 1
                blob = f.read_bytes()
                found += [f"{f.relative_to(tmp)}: {n.decode()}" for n in needles if n in blob]
    sent_key = sum(SECRETS["OPENAI_API_KEY"] in e.authorization for e in server.log)
    schemes = sorted({e.authorization.split(" ")[0] for e in server.log if e.authorization})
    return {"exit": res["exit"], "exit_unreachable": res_bad_url["exit"], "crash": res["crash"] or res_bad_url["crash"],
            "files_searched": searched, "leaks": found, "requests_with_key": sent_key, "requests": len(server.log),
            "authorization_schemes_sent": schemes}


def kill9(tmp: Path, port: int, fractions: list[float]) -> dict[str, Any]:
    """SIGKILL a judged run at a share of its calls, then finish it with the same cache and out dir."""
    data = tmp / "judged.jsonl"
    answered: list[tuple[str, float]] = []

    def slow(call: ChatCall) -> Any:
        async def later() -> Any:
            await asyncio.sleep(0.15)
            answered.append((f"{call.schema_name}|{call.all_text}", time.time()))
            return judge_rule(call)
        return later()

    server = FakeLLMServer(slow, port=port).start()
    points = []
    try:
        base_cache, base_out = tmp / "k-base-cache", tmp / "k-base"
        run(eval_cmd(data, base_out, base_cache, server.url, METRICS, ["--concurrency", "2"]))
        total = len(server.log)
        base = scores(base_out)
        for frac in fractions:
            server.clear_log()
            answered.clear()
            out, cache = tmp / f"k-{frac}", tmp / f"k-{frac}-cache"
            cmd = eval_cmd(data, out, cache, server.url, METRICS, ["--concurrency", "2"])
            proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.time() + 120
            while len(answered) < frac * total and proc.poll() is None and time.time() < deadline:
                time.sleep(0.01)
            os.kill(proc.pid, signal.SIGKILL)
            kill_time = time.time()
            proc.wait()
            killed_at = len(answered)
            before = {k: t for k, t in answered}
            lines = (out / "results.jsonl").read_text().splitlines() if (out / "results.jsonl").exists() else []
            parsed = 0
            for line in lines:
                try:
                    _strict(line)
                    parsed += 1
                except ValueError:
                    pass
            server.clear_log()
            answered.clear()
            res = run(cmd)
            again = [kill_time - before[k] for k, _ in answered if k in before]
            final = scores(out)
            points.append({"fraction": frac, "calls_total": total, "calls_answered_before_kill": killed_at,
                           "rows_on_disk": len(lines), "rows_parsed": parsed, "rerun_exit": res["exit"],
                           "rerun_calls": len(answered), "answered_calls_asked_again": len(again),
                           # answered > 0.5 s before the kill: the client had time to store them
                           "answered_calls_paid_twice": sum(a > 0.5 for a in again),
                           "rerun_equals_fault_free": final == base, "non_strict_json": strict_outputs(out)})
            print(json.dumps(points[-1]), flush=True)
    finally:
        server.stop()
    return {"points": points}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=14)
    parser.add_argument("--port", type=int, default=18900)
    parser.add_argument("--out", default=str(ROOT / "bench/results/fault_matrix_2026-12-02.json"))
    parser.add_argument("--only", choices=["faults", "hostile", "leaks", "kill9"], action="append")
    args = parser.parse_args()
    parts = args.only or ["faults", "hostile", "leaks", "kill9"]
    t0 = time.perf_counter()
    result: dict[str, Any] = {"date": "2026-12-02", "command": "PYTHONPATH=src python bench/fault_matrix.py",
                              "rows": args.rows, "metrics": METRICS}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        data = tmp / "judged.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in dataset(args.rows)))
        if "faults" in parts:
            result["faults"] = fault_matrix(tmp, args.port, args.rows)
        if "hostile" in parts:
            result["hostile"] = hostile(tmp)
        if "leaks" in parts:
            result["leaks"] = leaks(tmp, args.port + 1)
        if "kill9" in parts:
            result["kill9"] = kill9(tmp, args.port + 2, [0.25, 0.5, 0.75])
    f = result.get("faults", {})
    sc = f.get("scenarios", [])
    summary = {
        "fault_scenarios": max(0, len(sc) - 1),
        "results_compared": sum(s.get("identical", 0) + s.get("error", 0) + s.get("undefined", 0) + s.get("missing", 0)
                                + s.get("silently_wrong", 0) for s in sc),
        "silently_wrong": len(f.get("silently_wrong", [])),
        "crashes": sum(s["crash"] for s in sc) + result.get("hostile", {}).get("crashes", 0)
        + int(result.get("leaks", {}).get("crash", False)),
        "non_strict_json_outputs": sum(bool(s["non_strict_json"]) for s in sc)
        + result.get("hostile", {}).get("non_strict_json", 0),
        "hostile_files": result.get("hostile", {}).get("files", 0),
        "hostile_bad_exit": result.get("hostile", {}).get("bad_exit", 0),
        "hostile_exit2_without_file_and_place": result.get("hostile", {}).get("exit2_without_place", 0),
        "leaks": len(result.get("leaks", {}).get("leaks", [])),
        "kill9": [{k: p[k] for k in ("fraction", "calls_answered_before_kill", "rows_on_disk", "rows_parsed",
                                     "answered_calls_asked_again", "answered_calls_paid_twice",
                                     "rerun_equals_fault_free")}
                  for p in result.get("kill9", {}).get("points", [])],
        "seconds": round(time.perf_counter() - t0, 1),
    }
    result["summary"] = summary
    if "faults" in result:
        result["faults"].pop("baseline", None)
        result["faults"].pop("data", None)
    print(f"{'scenario':22} {'exit':>4} {'calls':>5} {'same':>5} {'error':>5} {'undef':>5} {'WRONG':>5}")
    for s in sc:
        print(f"{s['scenario']:22} {s['exit']:>4} {s['calls']:>5} {s.get('identical', 0):>5} {s.get('error', 0):>5} "
              f"{s.get('undefined', 0):>5} {s.get('silently_wrong', 0):>5}")
    print(json.dumps(summary, indent=1))
    text = json.dumps(result, indent=1, allow_nan=False, ensure_ascii=False)
    Path(args.out).write_text(text + "\n")
    sys.exit(0 if not (summary["silently_wrong"] or summary["crashes"] or summary["leaks"]) else 1)


if __name__ == "__main__":
    main()
