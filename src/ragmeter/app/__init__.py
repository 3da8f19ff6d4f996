"""Evaluate the app, not an export: ``ragmeter run`` calls the user's RAG app on each question.

:func:`resolve_app` turns an APP spec (``pkg.module:function``, a LangChain Runnable, a LlamaIndex
query engine, an ``http(s)://`` endpoint) into an :class:`~ragmeter.app.targets.AppTarget`;
:func:`run_app` calls it on the questions (concurrently, outputs cached) and evaluates the
answers; :func:`run_experiment` does so for every combination of parameters and compares them.
"""

from __future__ import annotations

from .runner import AppCache, Experiment, collect, read_questions, run_app, run_experiment
from .targets import AppTarget, HttpApp, PythonApp, app_output, resolve_app

__all__ = ["AppCache", "AppTarget", "Experiment", "HttpApp", "PythonApp", "app_output", "collect",
           "read_questions", "resolve_app", "run_app", "run_experiment"]
