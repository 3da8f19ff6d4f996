"""Built-in metrics. Importing this package registers every one of them."""

from . import retrieval  # noqa: F401
