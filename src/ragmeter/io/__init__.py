"""Reading and writing evaluation data.

:func:`read_samples` streams :class:`~ragmeter.types.Sample` objects from JSONL (``.jsonl``,
``.jsonl.gz``), JSON, CSV and Parquet files, turning every bad row into an
:class:`~ragmeter.errors.InputError` that names the file, the line or row and the field;
:func:`write_samples` writes JSONL or Parquet. :func:`as_samples` reads data as users hold it (a
path, dicts, a pandas DataFrame, a Hugging Face Dataset, RAGAS or DeepEval objects); it is what
:func:`ragmeter.evaluate` calls. :class:`ReadOptions` is how rows are read (``on_error``,
``field_map``, ``format``, ``max_text_chars``): one value, checked once, for every reader and
engine. The accepted fields and every rule are in ``docs/input-format.md``.
"""

from .adapters import as_samples
from .options import FORMATS, ReadOptions
from .readers import detect_format, read_samples
from .writers import sample_record, write_samples

__all__ = ["FORMATS", "ReadOptions", "as_samples", "detect_format", "read_samples", "sample_record",
           "write_samples"]
