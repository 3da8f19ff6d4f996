"""Lexical metrics (no model, deterministic): each module holds a pure per-sample function and its
registry entry. ``token_f1`` and ``rouge_l`` compare the answer with the reference answer;
``lexical_faithfulness`` checks the answer's sentences against the retrieved contexts and
``fact_consistency`` its numbers, names and negations."""

from . import fact_consistency, lexical_faithfulness, rouge_l, token_f1  # noqa: F401  (importing registers the metrics)
