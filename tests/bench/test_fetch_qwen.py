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


def _build_with_stand_ins(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], str, Path]:
    """build-cpp with a download that writes a stand-in sdist and a ``cmake`` on PATH that records its
    arguments and, when asked to build, writes a stand-in ``bin/llama-server`` into the build dir."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    sdist = tmp_path / "sdist" / "llama_cpp_python-0.3.36" / "vendor" / "llama.cpp"
    sdist.mkdir(parents=True)
    tarball = tmp_path / "llama_cpp_python-0.3.36.tar.gz"
    subprocess.run(["tar", "-czf", str(tarball), "-C", str(tmp_path / "sdist"), "llama_cpp_python-0.3.36"], check=True)
    fake_py = tmp_path / "fake-python"
    # pip download ... -d DIR SPEC: copy the stand-in sdist into DIR
    fake_py.write_text(f'#!/bin/sh\nwhile [ "$1" != "-d" ]; do shift; done\ncp {tarball} "$2"/\n')
    fake_py.chmod(0o755)
    tools = tmp_path / "tools"
    tools.mkdir()
    calls = tmp_path / "cmake-calls"
    (tools / "cmake").write_text(
        f'#!/bin/sh\necho "$@" >> {calls}\n'
        'if [ "$1" = "--build" ]; then mkdir -p "$2/bin"; '
        'printf "#!/bin/sh\\necho stand-in\\n" > "$2/bin/llama-server"; chmod +x "$2/bin/llama-server"; fi\n')
    (tools / "cmake").chmod(0o755)
    home = tmp_path / "home"
    full = {k: v for k, v in os.environ.items() if k not in ("LLAMA_CPP_VERSION", "JUDGE_NATIVE")}
    full.update(RAGMETER_JUDGE_HOME=str(home), PYTHON=str(fake_py), PATH=f"{tools}:{full['PATH']}", **env)
    done = subprocess.run(["bash", str(SCRIPT), "build-cpp"], env=full, capture_output=True, text=True, timeout=60)
    return done, calls.read_text() if calls.exists() else "", home


def test_build_cpp_is_portable_by_default_and_native_when_asked(tmp_path: Path) -> None:
    done, calls, home = _build_with_stand_ins(tmp_path / "portable")
    assert done.returncode == 0, done.stderr
    configure, build = calls.splitlines()
    assert "-DGGML_NATIVE=OFF" in configure.split() and configure.split()[3].endswith("/build")
    assert build.split()[:2] == ["--build", configure.split()[3]]
    assert (home / "bin" / "llama-server").exists() and not (home / "bin" / "llama-server-native").exists()

    done, calls, home = _build_with_stand_ins(tmp_path / "native", JUDGE_NATIVE="1")
    assert done.returncode == 0, done.stderr
    configure, build = calls.splitlines()
    assert "-DGGML_NATIVE=ON" in configure.split() and configure.split()[3].endswith("/build-native")
    assert (home / "bin" / "llama-server-native").exists() and not (home / "bin" / "llama-server").exists()
    assert (home / "logs" / "build-cpp-native.log").exists()
