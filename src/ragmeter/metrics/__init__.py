"""Built-in metrics. Importing this package registers every one of them."""

from . import embedding, generation, lexical, retrieval  # noqa: F401
