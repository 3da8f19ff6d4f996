"""Built-in judge backends; importing this package registers them.

``openai`` (:mod:`.openai_compat`), ``ollama`` and ``ollama-native`` (:mod:`.ollama_native`),
``litellm`` (:mod:`.litellm_backend`) and ``llamacpp`` (:mod:`.llamacpp_backend`). The last two
import their optional library only when a judge is built, and say which extra to install when it
is missing.
"""

from . import litellm_backend, llamacpp_backend, ollama_native, openai_compat

__all__ = ["litellm_backend", "llamacpp_backend", "ollama_native", "openai_compat"]
