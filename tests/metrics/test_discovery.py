"""Metric modules are found, not listed: every metric package imports each of its public
modules with :func:`ragmeter.registry.import_package_modules`, so adding a metric is adding its module.

The end-to-end test copies the package to a temporary directory, drops a new metric module into
the lexical or the generation package of the copy (no other file changes) and asks the copy's
registry in a fresh interpreter whether it knows the new metric.
"""

from __future__ import annotations

import json
import pkgutil
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ragmeter
from ragmeter import list_metrics
from ragmeter.registry import get_spec, import_package_modules

PACKAGES = ("retrieval", "generation", "lexical", "embedding")

PROBES = {
    "lexical": '''
        """Probe: 1 when the answer is non-empty."""
        from .base import Outcome, register_lexical

        def score(sample):
            return Outcome(float(bool(sample.answer)), "probe")

        register_lexical("probe_nonempty", score, role="answer", summary="probe", formula="1[answer]",
                         edge_cases=("none",), requires=("answer",), undefined="never undefined")
    ''',
    "generation": '''
        """Probe: a judged metric with no steps of its own."""
        from ._base import JudgedEvaluator, register_judged

        class ProbeEvaluator(JudgedEvaluator):
            pass

        register_judged("probe_judged", ProbeEvaluator, role="answer", summary="probe", formula="-",
                        edge_cases=("none",), requires=("answer",), calls="1")
    ''',
}

CHECK = """
import json, sys
import ragmeter
before = "{module}" in sys.modules
from ragmeter.registry import get_evaluator, get_spec, list_metrics
spec = get_spec("{metric}")
print(json.dumps({{"before": before, "after": "{module}" in sys.modules, "category": spec.category,
                  "names": [s.name for s in list_metrics()], "math": "{math}" in sys.modules,
                  "file": ragmeter.__file__}}))
"""


def _public_modules(package: str) -> set[str]:
    pkg = __import__(f"ragmeter.metrics.{package}", fromlist=["_"])
    return {f"{pkg.__name__}.{m.name}" for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")}


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_module_of_each_metric_package_is_imported(package):
    list_metrics()
    modules = _public_modules(package)
    assert modules, package
    assert all(m in sys.modules for m in modules), sorted(m for m in modules if m not in sys.modules)
    assert any(s.category == package for s in list_metrics()), f"no {package} metric is registered"


def test_import_package_modules_skips_private_names_and_returns_what_it_imported(tmp_path, monkeypatch):
    pkg = tmp_path / "probe_pkg_discovery"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "b_metric.py").write_text("LOADED = True\n")
    (pkg / "a_math.py").write_text("LOADED = True\n")
    (pkg / "_private.py").write_text("raise RuntimeError('a private helper must not be imported')\n")
    (pkg / "sub").mkdir()
    (pkg / "sub" / "__init__.py").write_text("LOADED = True\n")
    (pkg / "notes.prompt").write_text("not python\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        got = import_package_modules("probe_pkg_discovery", [str(pkg)])
        assert got == ["probe_pkg_discovery.a_math", "probe_pkg_discovery.b_metric", "probe_pkg_discovery.sub"]
        assert "probe_pkg_discovery._private" not in sys.modules
    finally:
        for name in [m for m in sys.modules if m.startswith("probe_pkg_discovery")]:
            del sys.modules[name]


@pytest.mark.parametrize(("package", "metric"), [("lexical", "probe_nonempty"), ("generation", "probe_judged")])
def test_a_module_dropped_into_a_metric_package_is_registered_with_no_other_edit(tmp_path, package, metric):
    src = Path(ragmeter.__file__).resolve().parent
    copy = tmp_path / "src" / "ragmeter"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / "metrics" / package
    (target / f"{metric}.py").write_text(textwrap.dedent(PROBES[package]), encoding="utf-8")
    # helpers beside it: a private module that would fail if imported, a public one that registers nothing
    (target / "_probe_helper.py").write_text("raise RuntimeError('private helpers are not discovered')\n")
    (target / "probe_math.py").write_text('"""Arithmetic only."""\nTWO = 2\n')
    module = f"ragmeter.metrics.{package}.{metric}"
    code = CHECK.format(module=module, metric=metric, math=f"ragmeter.metrics.{package}.probe_math")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "src"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(out["file"]).resolve() == (copy / "__init__.py").resolve()  # the copy ran, not the checkout
    assert out["before"] is False  # `import ragmeter` alone imports no metric module
    assert out["after"] is True and out["category"] == package
    assert out["math"] is True  # a public helper module is imported and registers nothing
    builtin = {s.name for s in list_metrics()}
    assert set(out["names"]) == builtin | {metric}
    with pytest.raises(Exception, match=metric):
        get_spec(metric)  # the checkout itself is untouched
