"""docs/howto/ci-gate.md's GitHub Actions workflow, run as far as it can be here: its ``run:`` steps with bash
on the bundled examples, offline, as a push to main and then as a pull request."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from ragmeter._plugins import CACHE_ENV

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "howto" / "ci-gate.md"
#: The ``if:`` conditions the recipe may use, evaluated for a push to main and for a pull request.
CONDITIONS = {
    "always()": {"push": True, "pr": True},
    "github.event_name == 'pull_request'": {"push": False, "pr": True},
    "github.ref == 'refs/heads/main'": {"push": True, "pr": False},
}


def workflow() -> dict:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1
    return yaml.safe_load(blocks[0])


def steps() -> list[dict]:
    return workflow()["jobs"]["evaluate"]["steps"]


def _uses(prefix: str) -> list[dict]:
    return [s for s in steps() if s.get("uses", "").startswith(prefix)]


def test_workflow_is_valid_and_its_steps_name_the_same_paths():
    wf = workflow()
    assert set(wf[True] if True in wf else wf["on"]) == {"push", "pull_request"}  # YAML 1.1 reads `on` as True
    job = wf["jobs"]["evaluate"]
    assert CACHE_ENV in job["env"]  # the variable ragmeter reads its cache directory from
    cache_dir = job["env"][CACHE_ENV].split("/")[-1]
    (cache,) = _uses("actions/cache@")
    assert cache["with"]["path"] == cache_dir
    script = "\n".join(s.get("run", "") for s in steps())
    junit = re.search(r"--junit (\S+)", script).group(1)
    outdir = re.search(r"ragmeter eval \S+ -o (\S+)", script).group(1)
    (report,) = [s for s in steps() if "junit" in s.get("uses", "")]
    assert report["with"]["report_paths"] == junit
    (artifact,) = _uses("actions/upload-artifact@")
    assert artifact["with"]["path"].rstrip("/") == outdir
    restore, save = _uses("actions/cache/restore@")[0], _uses("actions/cache/save@")[0]
    assert restore["with"]["path"] == save["with"]["path"] == "baseline"
    assert "--baseline baseline" in script
    install = next(s["run"] for s in steps() if "pip install" in s.get("run", ""))
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in install
    assert 'pip install -e "./ragmeter[embeddings]"' in install  # from the clone, not an index
    for s in steps():
        assert s.get("if") is None or s["if"] in CONDITIONS, s["if"]


def _run_steps(event: str, work: Path, env: dict[str, str]) -> list[subprocess.CompletedProcess]:
    """Run the workflow's ``run:`` steps (but the install) that ``event`` reaches, as the runner does."""
    done = []
    for step in steps():
        if "run" not in step or "pip install" in step["run"]:
            continue
        if step.get("if") is not None and not CONDITIONS[step["if"]][event]:
            continue
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=work,
                              env=env, capture_output=True, text=True, timeout=600)
        done.append(proc)
        if proc.returncode:
            break
    return done


@pytest.fixture
def workspace(tmp_path) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "ws"
    (work / "eval").mkdir(parents=True)
    job_env = workflow()["jobs"]["evaluate"]["env"]
    shutil.copy(ROOT / "examples" / "rag_samples.jsonl", work / job_env["DATA"])
    bin_dir = tmp_path / "bin"  # `ragmeter` on PATH, running this checkout's source
    bin_dir.mkdir()
    shim = bin_dir / "ragmeter"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "import sys; from ragmeter.cli import main; '
                    f'sys.exit(main())" "$@"\n')
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "OPENAI_API_KEY")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}"
               + env.get("PYTHONPATH", ""), DATA=job_env["DATA"], JUDGE="",  # no judge: offline
               GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"), NO_COLOR="1")
    env[CACHE_ENV] = str(work / ".ragmeter-cache")
    return work, env


def test_workflow_runs_on_the_examples_as_push_then_pull_requests(workspace, tmp_path):
    work, env = workspace
    push = _run_steps("push", work, env)
    assert [p.returncode for p in push] == [0, 0], [p.stderr for p in push]  # evaluate, keep as baseline
    assert (work / "baseline" / "summary.json").exists() and (work / "ragmeter-out" / "report.html").exists()
    summary = (tmp_path / "summary.md").read_text()
    # the bundled data's mrr is 13/19 = 0.6842 (tests/cli/test_examples_cli.py), over the 0.6 threshold
    assert "| `mrr` | 0.6842 |" in summary and "**Quality gate passed**" in summary
    suite = ET.parse(work / "ragmeter-junit.xml").getroot()
    assert suite.get("tests") == "2" and suite.get("failures") == "0"
    assert {c.get("name") for c in suite.iter("testcase")} == {"mrr", "recall@5"}
    assert any((work / ".ragmeter-cache").rglob("*")), "the cache directory the workflow keeps stayed empty"

    (tmp_path / "summary.md").unlink()
    pr = _run_steps("pr", work, env)
    assert [p.returncode for p in pr] == [0], pr[0].stderr  # the same data: no regression
    assert "vs baseline" in pr[0].stderr  # the regression checks ran against main's run
    suite = ET.parse(work / "ragmeter-junit.xml").getroot()
    kinds = {c.get("classname") for c in suite.iter("testcase")}
    assert kinds == {"ragmeter.threshold", "ragmeter.regression"}
    assert "**Quality gate passed**" in (tmp_path / "summary.md").read_text()

    # a pull request whose retriever lost its relevant contexts: every labelled id is dropped
    rows = [json.loads(x) for x in (work / env["DATA"]).read_text().splitlines()]
    for r in rows:
        if isinstance(r.get("relevant"), list | dict) and r.get("contexts"):
            ids = set(r["relevant"])
            r["contexts"] = [c for c in r["contexts"] if not (isinstance(c, dict) and c.get("id") in ids)]
    (work / env["DATA"]).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (proc,) = _run_steps("pr", work, env)
    assert proc.returncode == 1
    assert "FAIL: mrr" in proc.stderr
    failures = [c for c in ET.parse(work / "ragmeter-junit.xml").getroot().iter("testcase") if c.find("failure")
                is not None]
    assert {c.get("name") for c in failures} >= {"mrr"}
    assert any(c.get("classname") == "ragmeter.regression" for c in failures)  # worse than main's run


def test_no_doc_installs_ragmeter_from_an_index_and_the_readme_names_cpu_torch():
    # ragmeter is installed from its clone (pip install -e "."); `pip install ragmeter[...]` would
    # reach for a package index it is not on
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    offenders = [f"{p.name}: {m.group(0)}" for p in docs
                 for m in re.finditer(r"pip install\s+[\"']?ragmeter\b", p.read_text(encoding="utf-8"))]
    assert offenders == []
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in readme
