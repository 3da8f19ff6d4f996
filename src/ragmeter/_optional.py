"""Optional dependencies, imported when a call needs one, with an error that says how to install it.

scipy is one: :func:`ragmeter.stats.bootstrap_ci` with a ``statistic`` of your own hands it to scipy.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingBackendError

#: The install command of each optional module: the extra of the same name brings it.
INSTALL = {"pandas": 'pip install pandas (or pip install "ragmeter[pandas]")',
           "scipy": 'pip install scipy (or pip install "ragmeter[scipy]")'}


def require(module: str, purpose: str) -> ModuleType:
    """``module`` imported, or :class:`~ragmeter.errors.MissingBackendError` naming ``purpose``
    and the command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.partition(".")[0]
        raise MissingBackendError(f"{purpose} needs {top}, which is not installed: {INSTALL[top]}") from exc

