"""Optional dependencies, imported when a call needs one, with an error that says how to install it.

* pandas, for a DataFrame out (``RunResult.to_pandas``, ``Qrels`` / ``Run.to_dataframe``; a DataFrame
  handed in is read without importing pandas, see :func:`is_pandas_frame`);
* scipy, which :func:`ragmeter.stats.bootstrap_ci` hands a ``statistic`` of your own to;
* pyarrow (the ``arrow`` extra): Parquet in and out, and the columnar fast path of
  :func:`ragmeter.evaluate` and of TREC files (without it JSONL and CSV files take the ``Sample`` path
  and TREC files the line parser, with the same results);
* openai (the ``judges`` extra): the ``openai`` judge backend and the ``openai`` embedder.

Everything else runs without them.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

from .errors import MissingBackendError

#: The install command of each optional module (an extra of ragmeter brings each).
INSTALL = {"pandas": 'pip install pandas (or pip install -e ".[pandas]" in the ragmeter clone)',
           "scipy": 'pip install scipy (or pip install -e ".[scipy]" in the ragmeter clone)',
           "pyarrow": "pip install 'ragmeter[arrow]'",
           "openai": "pip install 'ragmeter[judges]'"}


def require(module: str, purpose: str) -> ModuleType:
    """``module`` imported, or :class:`~ragmeter.errors.MissingBackendError` naming ``purpose``
    and the command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.partition(".")[0]
        raise MissingBackendError(f"{purpose} needs {top}, which is not installed: {INSTALL[top]}") from exc


@cache
def available(module: str) -> bool:
    """Whether ``module`` imports (it is imported to find out; the answer is kept for the process)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def is_pandas_frame(obj: object) -> bool:
    """Whether ``obj`` is a pandas DataFrame, told without importing pandas."""
    return type(obj).__module__.startswith("pandas") and type(obj).__name__ == "DataFrame"
