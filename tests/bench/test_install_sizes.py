"""bench/install_sizes.py: the bytes an install brings, followed through requirements and extras."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.loader import load_bench

install_sizes = load_bench("install_sizes")


def _dist(site: Path, name: str, files: dict[str, int], requires: list[str]) -> None:
    """A distribution in ``site``: ``files`` (relative path -> size in bytes), listed in its RECORD
    (which, unlike a real one, does not list itself: the sizes stay round)."""
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    for rel, size in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(b"x" * size)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
                                   + "".join(f"Requires-Dist: {r}\n" for r in requires), encoding="utf-8")
    (info / "RECORD").write_text("".join(f"{rel},,\n" for rel in files),
                                 encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    # alpha needs beta; beta's extra "fast" needs gamma; delta is only in the extra "big", which asks beta[fast]
    _dist(site, "alpha_pkg", {"alpha_pkg/a.py": 1000}, ["beta-pkg>=1"])
    _dist(site, "beta_pkg", {"beta_pkg/b.py": 200, "beta_pkg/b.so": 3000}, ['gamma; extra == "fast"'])
    _dist(site, "gamma", {"gamma/g.py": 50}, [])
    _dist(site, "delta", {"delta/d.py": 7}, ["beta-pkg[fast]"])
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(install_sizes, "PROJECT", {
        "dependencies": ["alpha-pkg"],
        "optional-dependencies": {"big": ["delta"], "absent": ["not-installed-anywhere"], "all": ["ragmeter[big]"]}})
    monkeypatch.setattr(install_sizes, "_own_size", lambda: 5)
    return site


def test_core_is_its_requirements_and_their_requirements(site: Path) -> None:
    core = install_sizes.closure(set())
    # ragmeter 5 + alpha 1000 + beta 3200; gamma only with beta's extra
    assert core.sizes == {"ragmeter": 5, "alpha-pkg": 1000, "beta-pkg": 3200} and core.total == 4205
    assert core.missing == []


def test_an_extra_follows_the_extras_its_requirements_ask_for(site: Path) -> None:
    big = install_sizes.closure({"big"})
    assert big.total == 4205 + 7 + 50  # delta, and gamma through beta-pkg[fast]
    assert install_sizes.closure({"all"}).total == 4262  # an extra naming another one
    assert install_sizes.closure({"big"}, frozenset({"delta"})).total == 4205 + 7  # delta --no-deps


def test_the_table_names_an_extra_not_installed_and_adds_up_the_rest(site: Path, capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    assert install_sizes.closure({"absent"}).missing == ["not-installed-anywhere"]
    monkeypatch.setattr(install_sizes, "MB", 1)  # the table in bytes, so every number shows
    assert install_sizes.main([]) == 0
    lines = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()[1:]}
    assert lines["absent"][-1] == "not-installed-anywhere"
    assert lines["core"] == ["4205.0", "0.0"]
    # total, added to the core, the largest added: gamma 50 (through beta-pkg[fast]), delta 7
    assert lines["big"] == ["4262.0", "57.0", "gamma", "50.0,", "delta", "7.0"]
    assert lines["all"] == lines["big"]
