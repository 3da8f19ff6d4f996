"""The core install, without the ``arrow`` extra (pyarrow) and the ``judges`` extra (openai): every module
of ragmeter imports; a JSONL and a CSV file give the results the columnar path gives with pyarrow; TREC
files and dicts give the same numbers as Arrow's reader; a Parquet file, a Parquet output and an openai
judge or embedder are a :class:`~ragmeter.errors.MissingBackendError` naming the extra (exit 2 on the CLI).

The probe runs in a subprocess where a meta-path finder makes importing pyarrow and openai fail; this
process, with both installed, computes the references.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter import trec
from ragmeter.io import read_samples, write_samples
from ragmeter.trec.ids import ArrowIds

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "examples" / "rag_samples.jsonl"
KERNEL_METRICS = ["mrr", "ndcg@5", "recall@5", "map", "hit_rate@1", "precision@3"]
MEASURES = ["all_trec", "ndcg_cut.5,10", "P.5,10"]
ARROW_HINT = "pip install 'ragmeter[arrow]'"
JUDGES_HINT = "pip install 'ragmeter[judges]'"

PROBE = r"""
import json, sys, tempfile
from pathlib import Path

class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("pyarrow", "openai"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Blocked())
TMP = Path(tempfile.mkdtemp())
P = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
out = {}

def part(key):
    def run(fn):
        try:
            out[key] = fn()
        except BaseException as exc:
            out[key] = {"raised": f"{type(exc).__name__}: {exc}"}
    return run

@part("imports")
def _():
    from tests.optional_deps import import_every_module
    return import_every_module()

def run_files(name, path):
    import ragmeter
    result = ragmeter.evaluate(path, P["metrics"], out_dir=TMP / name)
    return {"results": (TMP / name / "results.jsonl").read_text(encoding="utf-8"),
            "summary": (TMP / name / "summary.json").read_text(encoding="utf-8"),
            "engine": result.run.get("engine")}

part("jsonl")(lambda: run_files("jsonl", P["jsonl"]))
part("csv")(lambda: run_files("csv", P["csv"]))

def trec_numbers(qrels, run):
    from ragmeter import trec
    res = trec.evaluate(qrels, run, P["measures"])
    return {"aggregate": res.aggregate(), "per_query": res.per_query()}

part("trec_files")(lambda: trec_numbers(P["qrels"], P["run"]))
part("trec_dicts")(lambda: trec_numbers(P["qrels_dict"], P["run_dict"]))
part("trec_mixed")(lambda: trec_numbers(P["qrels_dict"], P["run"]))

def cli(*args):
    from click.testing import CliRunner
    from ragmeter.cli import main
    res = CliRunner().invoke(main, list(args))
    return {"code": res.exit_code, "stdout": res.stdout, "stderr": res.stderr}

part("trec_cli")(lambda: cli("trec", "-q", P["qrels"], P["run"]))

def raised(call):
    from ragmeter.errors import MissingBackendError
    try:
        call()
    except MissingBackendError as exc:
        return str(exc)
    return "no error"

@part("parquet")
def _():
    import ragmeter
    from ragmeter.io import read_samples, write_samples
    from ragmeter.cli._progress import count_rows
    PARQUET, JSONL = P["parquet"], P["jsonl"]
    return {"evaluate": raised(lambda: ragmeter.evaluate(PARQUET, ["mrr"])),
            "evaluate_all": raised(lambda: ragmeter.evaluate(PARQUET)),
            "read": raised(lambda: list(read_samples(PARQUET))),
            "write": raised(lambda: write_samples(list(read_samples(JSONL)), TMP / "out.parquet")),
            "written": (TMP / "out.parquet").exists(),
            "count": count_rows(PARQUET),
            "cli": cli("eval", PARQUET, "-o", str(TMP / "pq"), "-m", "mrr")}

@part("openai")
def _():
    import ragmeter
    from ragmeter.embedders import from_spec as embedder_from_spec
    from ragmeter.judges import from_spec
    local, JSONL = "@http://127.0.0.1:9/v1", P["jsonl"]
    return {"judge": raised(lambda: from_spec("openai:m" + local)),
            "ollama": raised(lambda: from_spec("ollama:m")),
            "evaluate": raised(lambda: ragmeter.evaluate(JSONL, ["faithfulness"], judge="openai:m" + local)),
            "embedder": raised(lambda: embedder_from_spec("openai:m" + local)),
            "cli": cli("eval", JSONL, "-o", str(TMP / "judged"), "-m", "faithfulness", "--judge", "openai:m" + local),
            "written": (TMP / "judged" / "results.jsonl").exists()}

out["loaded"] = sorted(m for m in ("pyarrow", "openai") if sys.modules.get(m) is not None)
print(json.dumps(out))
"""


def _trec_data(folder: Path) -> tuple[Path, Path, dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Random qrels and run files (tied scores, graded and negative judgements, non-ASCII and long docids)
    and the qrels as a dict of dicts."""
    rng = random.Random(7)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(60):
        qid = f"q{q:03d}"
        docs = [f"d{rng.randrange(400)}" + ("é" * (d % 3)) + ("-long-docid-part" * (d % 4)) for d in range(40)]
        run[qid] = {d: round(rng.uniform(0, 5), 1) for d in docs}
        qrels[qid] = {d: rng.choice([-1, 0, 1, 1, 2, 3]) for d in rng.sample(sorted(set(docs)), 8)}
        qrels[qid][f"unretrieved{q}"] = 1
    qpath, rpath = folder / "qrels.txt", folder / "run.txt"
    qpath.write_text("".join(f"{q} 0 {d} {r}\n" for q, ds in qrels.items() for d, r in ds.items()), encoding="utf-8")
    rpath.write_text("".join(f"{q} Q0 {d} {i + 1} {s} bm25\n" for q, ds in run.items()
                             for i, (d, s) in enumerate(ds.items())), encoding="utf-8")
    return qpath, rpath, qrels, run


def _csv_of(jsonl: Path, path: Path) -> Path:
    """The rows of ``jsonl`` as a CSV file (lists and dicts JSON-encoded in their cells)."""
    import csv

    rows = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines() if line.strip()]
    fields = ["id", "query", "answer", "contexts", "relevant", "reference"]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: json.dumps(r[k]) if isinstance(r.get(k), list | dict) else r.get(k) for k in fields})
    return path


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("no-arrow")
    qpath, rpath, qrels, run = _trec_data(folder)
    csv_path = _csv_of(DATA, folder / "rows.csv")
    parquet = folder / "rows.parquet"
    write_samples(list(read_samples(DATA)), parquet)
    params = folder / "params.json"
    params.write_text(json.dumps({"metrics": KERNEL_METRICS, "measures": MEASURES,
                                  "jsonl": str(DATA), "csv": str(csv_path), "parquet": str(parquet),
                                  "qrels": str(qpath), "run": str(rpath), "qrels_dict": qrels, "run_dict": run}),
                      encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", PROBE, str(params)], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    res["paths"] = {"csv": csv_path, "qrels": qpath, "run": rpath, "qrels_dict": qrels, "run_dict": run}
    return res


def _stripped(summary: str) -> dict[str, Any]:
    """``summary.json`` without its timing fields and the engine's own record (which path ran)."""
    data: dict[str, Any] = json.loads(summary)
    for key in ("started", "seconds", "engine"):
        data["run"].pop(key, None)
    return data


def test_every_module_imports(probe: dict[str, Any]) -> None:
    imports = probe["imports"]
    assert "raised" not in imports, imports
    assert imports["failed"] == [], imports["failed"]
    assert {"ragmeter.trec", "ragmeter.trec.io", "ragmeter.trec.ids", "ragmeter.cli.trec_cmd",
            "ragmeter.engines.columnar", "ragmeter.io.writers"} <= set(imports["imported"])
    assert len(imports["imported"]) > 100
    assert probe["loaded"] == []


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_jsonl_and_csv_give_the_columnar_results(probe: dict[str, Any], fmt: str, tmp_path: Path) -> None:
    got = probe[fmt]
    assert "raised" not in got, got
    path = DATA if fmt == "jsonl" else probe["paths"]["csv"]
    ref = ragmeter.evaluate(path, KERNEL_METRICS, out_dir=tmp_path)
    assert ref.run["engine"]["path"] == "columnar"  # the reference is the fast path's
    assert got["engine"] is None  # the Sample path, which records no engine of its own
    assert got["results"] == (tmp_path / "results.jsonl").read_text(encoding="utf-8")
    assert _stripped(got["summary"]) == _stripped((tmp_path / "summary.json").read_text(encoding="utf-8"))


def _trec_reference(qrels: Any, run: Any) -> dict[str, Any]:
    res = trec.evaluate(qrels, run, MEASURES)
    # through JSON, as the probe's numbers came: a float keeps every digit, a tuple becomes a list
    return json.loads(json.dumps({"aggregate": res.aggregate(), "per_query": res.per_query()}))


@pytest.mark.parametrize("case", ["trec_files", "trec_dicts", "trec_mixed"])
def test_trec_gives_the_same_numbers(probe: dict[str, Any], case: str) -> None:
    got, paths = probe[case], probe["paths"]
    assert "raised" not in got, got
    assert isinstance(trec.Run.from_file(paths["run"]).docids, ArrowIds)  # the reference read with Arrow
    qrels = paths["qrels"] if case == "trec_files" else paths["qrels_dict"]
    run = paths["run_dict"] if case == "trec_dicts" else paths["run"]
    ref = _trec_reference(qrels, run)
    assert got == ref
    assert 0 < got["aggregate"]["map"] < 1 and len(got["per_query"]["map"]) == 60


def test_trec_cli_prints_the_same(probe: dict[str, Any]) -> None:
    from click.testing import CliRunner

    from ragmeter.cli import main

    got, paths = probe["trec_cli"], probe["paths"]
    assert "raised" not in got, got
    ref = CliRunner().invoke(main, ["trec", "-q", str(paths["qrels"]), str(paths["run"])])
    assert got["code"] == ref.exit_code == 0, got
    assert got["stdout"] == ref.stdout and ref.stdout.count("\n") > 1000


def test_parquet_needs_the_arrow_extra(probe: dict[str, Any]) -> None:
    got = probe["parquet"]
    assert "raised" not in got, got
    for key in ("evaluate", "evaluate_all", "read"):
        assert got[key].startswith("reading the Parquet file ") and got[key].endswith(ARROW_HINT), got[key]
    assert got["write"].startswith("writing the Parquet file ") and got["write"].endswith(ARROW_HINT)
    assert not got["written"]
    assert got["count"] is None  # the progress bar goes without a total
    assert got["cli"]["code"] == 2, got["cli"]
    assert got["cli"]["stderr"].startswith("ragmeter: error: reading the Parquet file ")
    assert ARROW_HINT in got["cli"]["stderr"] and "Traceback" not in got["cli"]["stderr"]


def test_openai_backends_need_the_judges_extra(probe: dict[str, Any]) -> None:
    got = probe["openai"]
    assert "raised" not in got, got
    assert got["judge"] == got["evaluate"] == f"the openai judge needs openai, which is not installed: {JUDGES_HINT}"
    assert got["ollama"] == "no error"  # Ollama's native API, over aiohttp (a core dependency)
    assert got["embedder"] == f"the openai embedder needs openai, which is not installed: {JUDGES_HINT}"
    assert got["cli"]["code"] == 2, got["cli"]
    assert got["cli"]["stderr"] == f"ragmeter: error: {got['judge']}\n"
    assert not got["written"]  # failed when the judge was built, before any row was scored
