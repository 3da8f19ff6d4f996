"""Optional dependencies, imported when a call needs one, with an error that says how to install it.

Two are: pandas, for a DataFrame out (``RunResult.to_pandas``, ``Qrels`` / ``Run.to_dataframe``; a
DataFrame handed in is read without importing pandas, see :func:`is_pandas_frame`), and scipy, which
:func:`ragmeter.stats.bootstrap_ci` hands a ``statistic`` of your own to. Everything else runs without them.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingBackendError

#: The install command of each optional module: the extra of the same name brings it.
INSTALL = {"pandas": 'pip install pandas (or pip install -e ".[pandas]" in the ragmeter clone)',
           "scipy": 'pip install scipy (or pip install -e ".[scipy]" in the ragmeter clone)'}


def require(module: str, purpose: str) -> ModuleType:
    """``module`` imported, or :class:`~ragmeter.errors.MissingBackendError` naming ``purpose``
    and the command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.partition(".")[0]
        raise MissingBackendError(f"{purpose} needs {top}, which is not installed: {INSTALL[top]}") from exc


def is_pandas_frame(obj: object) -> bool:
    """Whether ``obj`` is a pandas DataFrame, told without importing pandas."""
    return type(obj).__module__.startswith("pandas") and type(obj).__name__ == "DataFrame"
