"""What the tests that run ragmeter with an optional dependency made unimportable share (their probes
run in a subprocess started in the repository's root, which imports this module as ``tests.optional_deps``)."""

from __future__ import annotations

import importlib
import pkgutil

#: The optional extras' modules (and what they bring): a ragmeter module that needs one is left out.
EXTRAS = ("ray", "torch", "transformers", "sentence_transformers", "llama_cpp", "litellm", "tokenizers",
          "safetensors", "haystack", "langchain_core", "llama_index", "opentelemetry", "datasets", "playwright")


def import_every_module() -> dict[str, list[object]]:
    """Import every module of ragmeter: ``{"imported": [name], "left_out": [[name, error]], "failed":
    [[name, error]]}``; a module is left out when what it cannot import belongs to :data:`EXTRAS`."""
    import ragmeter

    imported: list[object] = []
    left_out: list[object] = []
    failed: list[object] = []
    for info in pkgutil.walk_packages(ragmeter.__path__, "ragmeter."):
        try:
            importlib.import_module(info.name)
            imported.append(info.name)
        except ImportError as exc:
            root = (exc.name or "").partition(".")[0]
            (left_out if root in EXTRAS else failed).append([info.name, repr(exc)])
    return {"imported": imported, "left_out": left_out, "failed": failed}
