"""bench/judges/fetch_qwen.sh build-cpp: which llama-cpp-python sdist it fetches.

The script is run for real with bash; the interpreter it downloads with (``$PYTHON``) is a stand-in
that records its arguments and fails, so nothing is fetched or built."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "judges" / "fetch_qwen.sh"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _build_cpp(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], str]:
    args_file = tmp_path / "args"
    fake = tmp_path / "fake-python"
    fake.write_text(f'#!/bin/sh\necho "$@" > {args_file}\nexit 1\n')
    fake.chmod(0o755)
    full = {k: v for k, v in os.environ.items() if k != "LLAMA_CPP_VERSION"}
    full.update(RAGMETER_JUDGE_HOME=str(tmp_path / "home"), PYTHON=str(fake), **env)
    done = subprocess.run(["bash", str(SCRIPT), "build-cpp"], env=full, capture_output=True, text=True,
                          timeout=60)
    return done, args_file.read_text() if args_file.exists() else ""


def test_build_cpp_without_a_python_build_fetches_the_verified_version(tmp_path: Path) -> None:
    done, args = _build_cpp(tmp_path)
    assert done.returncode != 0  # the stand-in download fails
    assert "download failed" in done.stderr
    assert "llama-cpp-python==0.3.36" in args.split()


def test_build_cpp_takes_the_pinned_version(tmp_path: Path) -> None:
    done, args = _build_cpp(tmp_path, LLAMA_CPP_VERSION="0.3.30")
    assert "download failed" in done.stderr
    assert "llama-cpp-python==0.3.30" in args.split()
