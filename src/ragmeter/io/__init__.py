"""Reading and writing evaluation data.

:func:`read_samples` streams :class:`~ragmeter.types.Sample` objects from JSONL (``.jsonl``,
``.jsonl.gz``), JSON, CSV and Parquet files, turning every bad row into an
:class:`~ragmeter.errors.InputError` that names the file, the line or row and the field;
:func:`write_samples` writes JSONL or Parquet. :func:`as_samples` reads data as users hold it (a
path, dicts, a pandas DataFrame, a Hugging Face Dataset, RAGAS or DeepEval objects); it is what
:func:`ragmeter.evaluate` calls. The accepted fields and every rule are in ``docs/input-format.md``.
"""

from .adapters import as_samples
from .readers import FORMATS, detect_format, read_samples
from .writers import sample_record, write_samples

__all__ = ["FORMATS", "as_samples", "detect_format", "read_samples", "sample_record", "write_samples"]
