r"""NLI faithfulness: the share of the answer's claims that an NLI cross-encoder finds entailed by the context.

.. math::

   p(c) = \max_{w \in W(\text{context}, c)} P_\text{model}(\text{entailment} \mid \text{premise}=w,\
          \text{hypothesis}=c), \qquad
   \mathrm{score} = \frac{|\{c \in C(a) : p(c) \ge \theta\}|}{|C(a)|}

with :math:`\theta` the ``threshold`` parameter (default 0.5) and :math:`W` the premise windows below.

**Claims** :math:`C(a)`. ``claims=sentences``: the answer's sentences, split by the rule of
:func:`ragmeter.metrics.lexical.lexical_faithfulness.split_sentences`; a sentence with no content
word (``It is.``) is not a claim. ``claims=judge``: the judge's atomic claims from
:func:`ragmeter.metrics.generation._answer_steps.decompose`, the very step the judged ``faithfulness``
metric uses, so when both metrics run the claims are shared and cost no extra judge call.
``claims=auto`` (default): the judge's claims when a judge is configured, else sentences
(``details.claims_from`` says which; pin ``claims=sentences`` to compare runs with and without a
judge).

**The model.** Any Hugging Face sequence-classification checkpoint whose ``config.id2label`` has
an entailment label (the one label whose name contains ``entail``, case-insensitive, excluding
``not_entailment``/``non-entailment``), e.g. a DeBERTa-v3 NLI model downloaded separately. Given
by ``faithfulness_nli(model='/path/to/model')`` or the ``RAGMETER_NLI_MODEL`` environment
variable (the parameter wins): a local directory, or a model name already in the local Hugging
Face cache (ragmeter never downloads). The probability is the softmax over *all* the model's
labels, read at the entailment label. The model is loaded lazily, once per process and path, and
runs on CPU under ``torch.no_grad`` in batches of :data:`BATCH_SIZE` windows.

**Windowing.** The premise is the retrieved contexts' texts joined by a blank line (as for the
judged metric). When premise + claim fit in the model's maximum length (the smaller of the
tokenizer's ``model_max_length`` and the model's position limit) there is one window: the whole
premise. Otherwise the premise is cut into windows of consecutive *tokens* (the tokenizer's own
overflow mechanism, ``truncation="only_first"``), each window paired with the whole claim, and
consecutive windows overlapping by :data:`WINDOW_OVERLAP` tokens (at most half a window), so a
piece of evidence shorter than the overlap is whole in at least one window. A claim's
probability is the **maximum** over its windows: one window that entails the claim suffices.
Windows ignore chunk boundaries, so evidence spread over neighbouring short chunks can still
meet in one window. A claim longer than half the maximum length is cut to that many tokens
(``details.claims[i].truncated``).

Edge cases: empty answer (None or blank) -> 1.0 (nothing to be unfaithful about); no context
text -> 0.0 (no claim can be supported); an answer with no claim -> 1.0. No model is loaded and
no judge call is made for these. A model or inference failure is recorded as the sample's error,
never a score.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...embedders.st import INSTALL_HINT
from ...errors import InvalidParameterError, MissingBackendError
from ...names import MetricName
from ...registry import MetricSpec, Param, register
from ...types import MetricResult, Sample
from ..lexical.lexical_faithfulness import content_tokens, split_sentences
from ._answer_steps import NO_CLAIM_UNDEFINED, decompose
from ._base import CLAIM_STEPS
from ._prompting import joined_context

NAME = "faithfulness_nli"
MODEL_ENV = "RAGMETER_NLI_MODEL"
DEFAULT_THRESHOLD = 0.5
#: Windows per forward pass.
BATCH_SIZE = 16
#: Tokens shared by consecutive premise windows (capped at half the window).
WINDOW_OVERLAP = 128
#: Maximum length used when neither the tokenizer nor the model config declares one.
FALLBACK_MAX_LENGTH = 512
CLAIM_SOURCES = ("auto", "sentences", "judge")
_NEGATED = ("not", "non", "no_")


# ---- pure parts ------------------------------------------------------------------------------------

def entailment_index(id2label: Mapping[Any, str], model: str = "the model") -> int:
    """The class index of the entailment label in ``id2label`` (keys may be ints or digit strings).

    The entailment label is the one whose lower-cased name contains ``entail`` and does not start
    with ``not``/``non``/``no_`` (so ``not_entailment`` of two-class models is skipped).

    Raises
    ------
    InvalidParameterError
        No such label, or more than one (the message lists the model's labels).
    """
    found: list[int] = []
    for key, label in id2label.items():
        norm = str(label).strip().lower().replace("-", "_").replace(" ", "_")
        if "entail" in norm and not norm.startswith(_NEGATED):
            found.append(int(key))
    if len(found) != 1:
        labels = ", ".join(f"{k}={v!r}" for k, v in sorted(id2label.items(), key=lambda kv: int(kv[0])))
        what = "no" if not found else "more than one"
        raise InvalidParameterError(
            f"metric {NAME!r}: {model} has {what} entailment label in config.id2label ({labels or 'empty'}); "
            "expected an NLI model with exactly one label named like 'entailment' (e.g. a DeBERTa-v3 NLI "
            "checkpoint). If the labels are generic (LABEL_0...), set id2label in its config.json"
        )
    return found[0]


def sentence_claims(answer: str) -> list[str]:
    """The answer's sentences that carry at least one content word (see the module docstring)."""
    return [s for s in split_sentences(answer) if content_tokens(s)]


def nli_faithfulness(probabilities: Sequence[float], threshold: float = DEFAULT_THRESHOLD) -> float:
    """``|{p >= threshold}| / |p|`` over the claims' entailment probabilities; 1.0 for no claim."""
    if not probabilities:
        return 1.0
    return sum(p >= threshold for p in probabilities) / len(probabilities)


# ---- the model -------------------------------------------------------------------------------------

def _missing_packages() -> list[str]:
    return [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]


def _looks_like_path(model: str) -> bool:
    return model.startswith(("/", ".", "~")) or "\\" in model or model.count("/") > 1 or os.path.exists(model)


def resolve_model(model: str) -> tuple[str, Path]:
    """(what ``from_pretrained`` loads, the path of its ``config.json``) for a directory or cached name.

    Raises
    ------
    MissingBackendError
        The directory does not exist or holds no ``config.json``, or the name is not in the local
        Hugging Face cache.
    """
    local = Path(model).expanduser()
    if local.is_dir():
        config = local / "config.json"
        if not config.is_file():
            raise MissingBackendError(
                f"metric {NAME!r}: {str(local)!r} has no config.json, so it is not a saved Hugging Face model: "
                "pass the directory a model was saved to (the one holding config.json and the weights)"
            )
        return str(local.resolve()), config
    if _looks_like_path(model):
        raise MissingBackendError(
            f"metric {NAME!r}: NLI model directory {model!r} does not exist: download an NLI model (e.g. a "
            f"DeBERTa-v3 NLI checkpoint) and pass its directory as {NAME}(model='/path') or ${MODEL_ENV}"
        )
    cached: Any = None
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(model, "config.json")
    except Exception:  # malformed repo id, no huggingface_hub: treated as not cached
        cached = None
    if not isinstance(cached, str):
        raise MissingBackendError(
            f"metric {NAME!r}: NLI model {model!r} is neither a local directory nor in the local Hugging Face "
            f"cache, and ragmeter never downloads models: download it first (e.g. `hf download {model}`) or "
            f"pass a directory as {NAME}(model='/path') or ${MODEL_ENV}"
        )
    return model, Path(cached)


class NLIModel:
    """A loaded NLI cross-encoder: ``entailment(pairs)`` gives P(entailment) per (premise, hypothesis).

    Thread-safe (one lock around tokenisation and inference: fast tokenizers must not be driven
    from two threads at once).
    """

    def __init__(self, source: str) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as exc:
            raise MissingBackendError(f"metric {NAME!r} could not import torch/transformers ({exc}): "
                                      f"{INSTALL_HINT}") from exc
        from transformers.utils import logging as hf_logging

        local_only = not Path(source).is_dir()
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # no "Loading weights" bar inside ragmeter's own progress display
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
            self.model = AutoModelForSequenceClassification.from_pretrained(source, local_files_only=local_only)
        except (OSError, ValueError) as exc:
            raise MissingBackendError(
                f"metric {NAME!r} could not load the NLI model {source!r} offline ({exc}); it needs a saved "
                "sequence-classification model with its tokenizer"
            ) from exc
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        self.model.eval()
        self.model.to("cpu")
        self.source = source
        self.torch = torch
        self.entail = entailment_index(self.model.config.id2label, f"model {source!r}")
        self.max_length = self._max_length()
        self.input_names = list(self.tokenizer.model_input_names)
        self._lock = threading.Lock()

    def _max_length(self) -> int:
        limits: list[int] = []
        tok_max = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
            limits.append(tok_max)
        pos = getattr(self.model.config, "max_position_embeddings", None)
        if isinstance(pos, int) and pos > 0:
            # RoBERTa-style position ids start after the padding index
            limits.append(pos - 2 if str(getattr(self.model.config, "model_type", "")).endswith("roberta") else pos)
        return min(limits) if limits else FALLBACK_MAX_LENGTH

    def windows(self, premise: str, hypothesis: str) -> tuple[list[dict[str, list[int]]], bool]:
        """The encoded (premise window, hypothesis) pairs of one claim and whether the claim was cut."""
        tok = self.tokenizer
        hyp_ids = tok(hypothesis, add_special_tokens=False)["input_ids"]
        cap = self.max_length // 2
        truncated = len(hyp_ids) > cap
        if truncated:
            hypothesis = str(tok.decode(hyp_ids[:cap]))
            hyp_ids = hyp_ids[:cap]
        budget = self.max_length - tok.num_special_tokens_to_add(pair=True) - len(hyp_ids)
        stride = max(0, min(WINDOW_OVERLAP, budget // 2 - 1))
        enc = tok(premise, hypothesis, truncation="only_first", max_length=self.max_length, stride=stride,
                  return_overflowing_tokens=True)
        n = len(enc["input_ids"])
        return [{k: enc[k][i] for k in self.input_names if k in enc} for i in range(n)], truncated

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, int, bool]]:
        """Per (premise, hypothesis): (max P(entailment) over windows, number of windows, hypothesis cut)."""
        with self._lock:
            owners: list[int] = []
            features: list[dict[str, list[int]]] = []
            cut: list[bool] = []
            for i, (premise, hypothesis) in enumerate(pairs):
                wins, truncated = self.windows(premise, hypothesis)
                features += wins
                owners += [i] * len(wins)
                cut.append(truncated)
            probs = [0.0] * len(features)
            order = sorted(range(len(features)), key=lambda j: len(features[j]["input_ids"]))
            with self.torch.no_grad():
                for start in range(0, len(order), BATCH_SIZE):
                    idx = order[start:start + BATCH_SIZE]
                    batch = self.tokenizer.pad([features[j] for j in idx], return_tensors="pt")
                    logits = self.model(**{k: batch[k] for k in self.input_names if k in batch}).logits
                    entail = self.torch.softmax(logits.float(), dim=-1)[:, self.entail].tolist()
                    for j, pj in zip(idx, entail, strict=True):
                        probs[j] = float(pj)
        best = [-1.0] * len(pairs)
        count = [0] * len(pairs)
        for owner, p in zip(owners, probs, strict=True):
            best[owner] = max(best[owner], p)
            count[owner] += 1
        if any(not math.isfinite(b) or b < 0 for b in best):
            raise RuntimeError(f"the NLI model {self.source!r} gave no finite probability for a claim")
        return [(b, c, t) for b, c, t in zip(best, count, cut, strict=True)]


_MODELS: dict[str, NLIModel] = {}
_MODELS_LOCK = threading.Lock()


def load_model(source: str) -> NLIModel:
    """The :class:`NLIModel` for ``source``, loaded once per process."""
    with _MODELS_LOCK:
        if source not in _MODELS:
            _MODELS[source] = NLIModel(source)
        return _MODELS[source]


# ---- the evaluators --------------------------------------------------------------------------------

class _NLIFaithfulnessBase:
    """Shared configuration, edge cases and result building."""

    claims_from = "sentences"

    def __init__(self, spec: MetricSpec, name: MetricName, judge: Any, source: str) -> None:
        self.spec = spec
        self.name = str(name)
        self.version = spec.version
        self.params = {p.name: p.default for p in spec.params} | name.kwargs
        self.threshold = float(self.params["threshold"])
        self.judge = judge
        self.source = source

    @property
    def nli(self) -> NLIModel:
        """The loaded model (loaded at first use)."""
        return load_model(self.source)

    def result(self, score: float, reason: str, **details: Any) -> MetricResult:
        """A result of this metric."""
        return MetricResult(name=self.name, score=score, reason=reason, details=details, version=self.version)

    def edge_case(self, sample: Sample) -> MetricResult | None:
        """The result of an empty answer or a sample without context text, else None."""
        if not (sample.answer or "").strip():
            return self.result(1.0, "empty answer: nothing to be unfaithful about")
        if not any(t.strip() for t in sample.context_texts):
            return self.result(0.0, "no retrieved context: no claim can be supported")
        return None

    def scored(self, claims: list[str], verdicts: Sequence[tuple[float, int, bool]]) -> MetricResult:
        """The result for claims and their (probability, windows, truncated)."""
        base = {"claims_from": self.claims_from, "model": self.source, "threshold": self.threshold}
        if not claims:
            return self.result(1.0, "the answer states no claim", **base, supported=0, claims=[])
        probs = [p for p, _, _ in verdicts]
        score = nli_faithfulness(probs, self.threshold)
        supported = sum(p >= self.threshold for p in probs)
        rows: list[dict[str, Any]] = [
            {"claim": c, "entailment": p, "supported": p >= self.threshold, "windows": w, "truncated": t}
            for c, (p, w, t) in zip(claims, verdicts, strict=True)
        ]
        reason = (f"{supported} of {len(claims)} claims entailed by the context "
                  f"(P(entailment) >= {self.threshold:g})")
        unsupported = [r for r in rows if not r["supported"]]
        if unsupported:
            weakest = min(unsupported, key=lambda r: r["entailment"])
            reason += f"; least supported: {weakest['claim'][:80]!r} (P={weakest['entailment']:.3f})"
        return self.result(score, reason, **base, supported=supported, claims=rows)


class NLIFaithfulness(_NLIFaithfulnessBase):
    """Claims from sentence splitting; scores whole batches (one batched inference per batch)."""

    def evaluate_batch(self, samples: Sequence[Sample], ctx: Any = None) -> list[MetricResult]:
        """Score every sample; all claims of the batch go through the model together."""
        out: list[MetricResult | None] = [self.edge_case(s) for s in samples]
        todo: list[tuple[int, list[str]]] = []
        for i, s in enumerate(samples):
            if out[i] is None:
                claims = sentence_claims(s.answer or "")
                if claims:
                    todo.append((i, claims))
                else:
                    out[i] = self.scored([], [])
        if todo:
            pairs = [(joined_context(samples[i]), c) for i, claims in todo for c in claims]
            try:
                verdicts = self.nli.entailment(pairs)
            except Exception as exc:  # a load or inference failure: recorded on the samples that needed it
                for i, _ in todo:
                    out[i] = MetricResult.from_error(self.name, self.version, exc)
            else:
                pos = 0
                for i, claims in todo:
                    out[i] = self.scored(claims, verdicts[pos:pos + len(claims)])
                    pos += len(claims)
        return [r for r in out if r is not None]

    def evaluate(self, sample: Sample) -> MetricResult:
        """Score one sample (an inference failure raises)."""
        edge = self.edge_case(sample)
        if edge is not None:
            return edge
        claims = sentence_claims(sample.answer or "")
        if not claims:
            return self.scored([], [])
        context = joined_context(sample)
        return self.scored(claims, self.nli.entailment([(context, c) for c in claims]))

    async def aevaluate(self, sample: Sample) -> MetricResult:
        """:meth:`evaluate` in a worker thread."""
        return await asyncio.to_thread(self.evaluate, sample)


class JudgedNLIFaithfulness(_NLIFaithfulnessBase):
    """Claims from the judge's decomposition (shared with ``faithfulness``), verified by the NLI model."""

    claims_from = "judge"

    async def aevaluate(self, sample: Sample) -> MetricResult:
        """Score one sample: one (shared) judge step, then the model in a worker thread."""
        edge = self.edge_case(sample)
        if edge is not None:
            return edge
        claims, no_facts = await decompose(self.judge, sample, NAME, str(self.params["steps"]))
        if not claims:
            if not no_facts:
                return MetricResult(name=self.name, score=None, reason=NO_CLAIM_UNDEFINED, version=self.version,
                                    details={"claims_from": self.claims_from, "claims": [], "no_facts": False})
            return self.scored([], [])
        context = joined_context(sample)
        verdicts = await asyncio.to_thread(self.nli.entailment, [(context, c) for c in claims])
        return self.scored(claims, verdicts)

    def evaluate(self, sample: Sample) -> MetricResult:
        """Synchronous :meth:`aevaluate` (not for use inside a running event loop)."""
        return asyncio.run(self.aevaluate(sample))


# ---- registration ----------------------------------------------------------------------------------

def _factory(name: MetricName, judge: Any, embedder: Any) -> NLIFaithfulness | JudgedNLIFaithfulness:
    spec = _spec_box[0]
    params = {p.name: p.default for p in spec.params} | name.kwargs
    threshold = float(params["threshold"])
    if not 0.0 < threshold <= 1.0:
        raise InvalidParameterError(
            f"metric {NAME!r}: parameter 'threshold' expected a number in (0, 1], got {threshold!r}"
        )
    if params["claims"] == "judge" and judge is None:
        raise MissingBackendError(
            f"metric {str(name)!r} takes its claims from an LLM judge: pass judge=... in Python or --judge SPEC "
            "on the command line, or use claims=sentences"
        )
    missing = _missing_packages()
    if missing:
        raise MissingBackendError(f"metric {NAME!r} needs {' and '.join(missing)}, not installed here: {INSTALL_HINT}")
    model = str(params["model"]).strip() or os.environ.get(MODEL_ENV, "").strip()
    if not model:
        raise MissingBackendError(
            f"metric {NAME!r} needs an NLI model (e.g. a DeBERTa-v3 NLI checkpoint, downloaded separately): "
            f"pass {NAME}(model='/path/to/model') or set {MODEL_ENV}=/path/to/model"
        )
    source, config = resolve_model(model)
    try:
        id2label = json.loads(config.read_text(encoding="utf-8")).get("id2label") or {}
    except (OSError, ValueError) as exc:
        raise MissingBackendError(f"metric {NAME!r}: cannot read {str(config)!r} ({exc})") from exc
    entailment_index(id2label, f"model {model!r}")
    use_judge = params["claims"] == "judge" or (params["claims"] == "auto" and judge is not None)
    if use_judge:
        return JudgedNLIFaithfulness(spec, name, judge, source)
    return NLIFaithfulness(spec, name, judge, source)


_spec_box: list[MetricSpec] = []
_spec_box.append(register(MetricSpec(
    name=NAME,
    summary="Share of the answer's claims entailed by the retrieved context according to an NLI cross-encoder; "
            "needs a real NLI model such as a DeBERTa-v3 NLI checkpoint (model=... or $RAGMETER_NLI_MODEL), "
            "no judge.",
    formula="score = |{c : p(c) >= threshold}| / |claims|; p(c) = max over premise windows w of "
            "P(entailment | premise = w, hypothesis = c); premise = contexts joined, cut into overlapping token "
            "windows only when it does not fit the model's maximum length",
    edge_cases=("empty answer -> 1.0", "no context -> 0.0", "no claim in the answer -> 1.0 (with judge claims: "
                "only when the judge states the answer makes no factual claim, else undefined)",
                "claims: answer sentences with a content word, or the judge's claims when a judge is configured "
                "(claims=auto; shared with faithfulness, no extra call when both run)",
                "long premise: max entailment over token windows overlapping by "
                f"{WINDOW_OVERLAP} tokens (at most half a window)",
                "a model without an entailment label in config.id2label -> error when the metric is built"),
    factory=_factory,
    category="generation",
    role="answer",
    params=(
        Param("model", str, "", f"NLI model directory or locally cached name (default: ${MODEL_ENV})"),
        Param("threshold", float, DEFAULT_THRESHOLD, "P(entailment) at or above which a claim is supported, "
              "in (0, 1]", minimum=0.0),
        Param("claims", str, "auto", "auto: the judge's claims when a judge is configured, else sentences",
              choices=CLAIM_SOURCES),
        CLAIM_STEPS,
    ),
    requires=("answer", "contexts"),
    default_names=(),
    version="2",
    reference_level=0.5,
    undefined="undefined only with the judge's claims, when the judge lists no claim for a non-empty answer "
              "without stating it makes none; a model load or inference failure is recorded as the sample's error",
    extra={"needs": f"a local NLI model (model=... or ${MODEL_ENV}); torch and transformers"},
)))
