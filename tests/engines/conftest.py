"""Engine test fixtures: the loopback judge server (from tests.judges) and one local Ray cluster."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.judges.conftest import _fake_llm_session, fake_llm, judge_cache_dir, make_judge  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """A real local Ray cluster with 2 CPUs for the module (workers can import ``tests``)."""
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    if ray.is_initialized():
        ray.shutdown()
    path = os.pathsep.join([str(ROOT), *[p for p in sys.path if p]])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield ray
    ray.shutdown()
