"""Judges and embedders share one plugin convention, one cache-dir rule and one local-server rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter import _plugins, embedders, judges
from ragmeter.errors import InvalidParameterError
from ragmeter.judges.backends import openai_compat


def test_one_cache_dir_rule(monkeypatch, tmp_path):
    assert judges.default_cache_dir is embedders.default_cache_dir is _plugins.default_cache_dir
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path / "c"))
    assert judges.ResponseCache().path.parent == embedders.VectorCache().path.parent == tmp_path / "c"
    monkeypatch.setenv("RAGMETER_CACHE_DIR", "")  # empty = unset
    import platformdirs

    assert _plugins.default_cache_dir() == Path(platformdirs.user_cache_dir("ragmeter", appauthor=False))


def test_one_local_rule():
    assert openai_compat.is_local_url is _plugins.is_local_url
    from ragmeter.embedders import openai_compat as emb_openai

    assert emb_openai.is_local_url is _plugins.is_local_url


def test_one_registration_convention():
    judge_names = {b.name for b in judges.list_backends()}
    emb_names = {b.name for b in embedders.list_backends()}
    assert {"openai", "ollama", "litellm", "llamacpp"} <= judge_names and {"st", "openai"} <= emb_names
    assert all(isinstance(b, _plugins.BackendInfo) for b in [*judges.list_backends(), *embedders.list_backends()])


def test_registry_errors():
    reg = _plugins.BackendRegistry("widget backend", "ragmeter.tests.none")
    info = reg.register(_plugins.BackendInfo("alpha", dict, "a"))
    assert reg.get("alpha") is info and reg.find("beta") is None and reg.list() == [info]
    with pytest.raises(InvalidParameterError, match=r"unknown widget backend 'alpah'\. Did you mean: alpha\?"):
        reg.get("alpah")
    with pytest.raises(InvalidParameterError, match="already registered"):
        reg.register(_plugins.BackendInfo("alpha", list))
    with pytest.raises(InvalidParameterError, match="lower-case name without ':'"):
        reg.register(_plugins.BackendInfo("A:b", list))
