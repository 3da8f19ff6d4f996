"""ragmeter.yaml: env expansion, validation errors naming key and line, presets, CLI overrides."""

from __future__ import annotations

import pytest
import yaml

from ragmeter import InputError
from ragmeter.config import STARTER, load_config, merge_cli, parse_config

EXAMPLE = """\
rag:
  eval:
    metrics: [faithfulness, answer_relevancy, context_relevancy, context_recall]
    model: ${JUDGE_LLM_REF}
"""


def test_issue_example_expands_env():
    cfg = parse_config(EXAMPLE, env={"JUDGE_LLM_REF": "openai:gpt-4o-mini"})
    assert cfg.eval.judge == "openai:gpt-4o-mini"
    assert cfg.eval.metric_names() == ["faithfulness", "answer_relevancy", "context_relevancy", "context_recall"]


def test_unset_variable_is_an_error_naming_it_and_the_line():
    with pytest.raises(InputError) as err:
        parse_config(EXAMPLE, path="ragmeter.yaml", env={})
    assert err.value.line == 4
    assert "JUDGE_LLM_REF" in str(err.value) and str(err.value).startswith("ragmeter.yaml:4:")


def test_default_value_syntax():
    cfg = parse_config("rag:\n  eval:\n    embedder: ${EMB:-st:all-MiniLM-L6-v2}\n", env={})
    assert cfg.eval.embedder == "st:all-MiniLM-L6-v2"
    cfg = parse_config("rag:\n  eval:\n    embedder: ${EMB:-x}\n", env={"EMB": "openai:e3"})
    assert cfg.eval.embedder == "openai:e3"


def test_unknown_key_names_key_and_line():
    text = "rag:\n  eval:\n    metrics: [mrr]\n    concurency: 4\n"
    with pytest.raises(InputError) as err:
        parse_config(text, path="c.yaml", env={})
    assert err.value.field == "rag.eval.concurency" and err.value.line == 4
    assert "unknown key" in str(err.value)


def test_wrong_type_names_key_and_line():
    text = "rag:\n  eval:\n    concurrency: many\n"
    with pytest.raises(InputError) as err:
        parse_config(text, path="c.yaml", env={})
    assert err.value.field == "rag.eval.concurrency" and err.value.line == 3


def test_bad_threshold_is_refused():
    with pytest.raises(InputError, match="threshold"):
        parse_config("rag:\n  eval:\n    gate:\n      fail_under: {faithfulness: 80}\n", env={})


def test_presets():
    retrieval = ["context_precision", "context_recall", "hit_rate@5", "map", "mrr", "ndcg@5", "precision@5",
                 "r_precision", "recall@5"]
    assert parse_config("rag:\n  eval:\n    preset: retrieval\n").eval.metric_names() == retrieval
    cfg = parse_config("rag:\n  eval:\n    preset: offline\n")
    # the offline preset needs no judge (and no embedder)
    assert cfg.eval.metric_names() == [*retrieval, "fact_consistency", "lexical_faithfulness", "rouge_l", "token_f1"]
    # explicit metrics win over the preset
    cfg = parse_config("rag:\n  eval:\n    preset: offline\n    metrics: [mrr]\n")
    assert cfg.eval.metric_names() == ["mrr"]


def test_cli_overrides_file():
    cfg = parse_config("rag:\n  eval:\n    concurrency: 4\n    gate:\n      fail_under: {mrr: 0.5}\n")
    merged = merge_cli(cfg, concurrency=32, judge=None, fail_under={"ndcg@5": 0.6})
    assert merged.concurrency == 32
    assert merged.gate.fail_under == {"mrr": 0.5, "ndcg@5": 0.6}


def test_starter_config_is_valid_and_commented(tmp_path):
    # as written, the starter lets the data decide (no preset, no metric list), so a
    # plain `ragmeter eval` with it computes what it computes with no config at all
    assert "preset" not in yaml.safe_load(STARTER)["rag"]["eval"]
    path = tmp_path / "ragmeter.yaml"
    path.write_text(STARTER)
    cfg = load_config(path, env={})
    assert cfg.eval.metric_names() is None
    assert "# preset: retrieval" in STARTER  # the presets are still offered, commented
    assert STARTER.count("#") > 10


def test_working_directory_file_is_picked_up(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_config().eval.metric_names() is None
    (tmp_path / "ragmeter.yaml").write_text("rag:\n  eval:\n    metrics: [mrr]\n")
    assert load_config().eval.metric_names() == ["mrr"]


def test_invalid_yaml_names_line():
    with pytest.raises(InputError) as err:
        parse_config("rag:\n  eval: [\n", path="c.yaml")
    assert err.value.path == "c.yaml" and err.value.line is not None


# ---- plain YAML only; values from the environment are recorded as written ------------


@pytest.mark.parametrize(("text", "line", "what"), [
    ("rag:\n  eval:\n    output: !!python/object/apply:os.getcwd []\n", 3, "!!python/object/apply:os.getcwd"),
    ("rag: !custom {}\n", 1, "'!custom'"),
    ("a: &a [*a]\n", 1, "recursive alias"),
    ("rag:\n  eval: &e\n    fields: *e\n", 2, "recursive alias"),
    ("a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
     "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n", 5, "more than 100,000"),
])
def test_tags_recursive_aliases_and_alias_bombs_name_file_and_line(text, line, what):
    with pytest.raises(InputError) as info:
        parse_config(text, path="r.yaml")
    assert (info.value.path, info.value.line) == ("r.yaml", line)
    assert what in str(info.value)


def test_as_written_gives_back_the_variable_not_its_value():
    cfg = parse_config("rag:\n  eval:\n    model: ${J}\n    cache: {dir: '${F:-query}'}\n", path="r.yaml",
                       env={"J": "openai:m@http://user:secret@127.0.0.1:1/v1"})
    assert cfg.eval.judge == "openai:m@http://user:secret@127.0.0.1:1/v1"  # used as expanded
    assert cfg.as_written(cfg.eval.judge) == "${J}"  # recorded as written
    assert cfg.as_written(cfg.eval.cache.model_dump()) == {"enabled": True, "dir": "${F:-query}"}
    assert cfg.as_written("openai:other") == "openai:other" and cfg.source == "r.yaml"


# ---- ${VAR} expands only where endpoints and credentials are written ------------------------------------

SECRET_ENV = {"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY", "JUDGE_URL": "http://127.0.0.1:9/v1",
              "JUDGE_LLM_REF": "openai:m@http://127.0.0.1:9/v1", "CACHE": "/tmp/c", "PW": "pw-1234"}


@pytest.mark.parametrize(("text", "line"), [
    ("rag:\n  eval:\n    rubrics:\n      - name: r\n        criteria: 'quote ${AWS_SECRET_ACCESS_KEY}'\n", 5),
    ("rag:\n  eval:\n    rubrics:\n      - {name: r, criteria: c, steps: ['${AWS_SECRET_ACCESS_KEY}']}\n", 4),
    ("rag:\n  eval:\n    output: 'out-${AWS_SECRET_ACCESS_KEY}'\n", 3),
    ("rag:\n  eval:\n    metrics: [mrr, '${AWS_SECRET_ACCESS_KEY}']\n", 3),
    ("rag:\n  eval:\n    gate:\n      baseline: ${AWS_SECRET_ACCESS_KEY}\n", 4),
    ("rag:\n  eval:\n    fields: {q: '${AWS_SECRET_ACCESS_KEY}'}\n", 3),
    # a variable inside the model name would be sent as the model and recorded with it
    ("rag:\n  eval:\n    model: 'openai:m-${AWS_SECRET_ACCESS_KEY}@http://127.0.0.1:9/v1'\n", 3),
    ("rag:\n  eval:\n    embedder: 'openai:${AWS_SECRET_ACCESS_KEY}'\n", 3),
    # an alias cannot carry an expanded value out of a field that may hold it
    ("rag:\n  eval:\n    cache: {dir: &d '/c/${AWS_SECRET_ACCESS_KEY}'}\n    output: *d\n", 3),  # the anchor's line
    ("rag:\n  eval:\n    output: &d '/c/${AWS_SECRET_ACCESS_KEY}'\n    cache: {dir: *d}\n", 3),
])
def test_a_variable_outside_the_endpoint_and_credential_fields_is_an_input_error(text, line):
    with pytest.raises(InputError) as info:
        parse_config(text, path="r.yaml", env=SECRET_ENV)
    assert (info.value.path, info.value.line) == ("r.yaml", line)
    assert "${AWS_SECRET_ACCESS_KEY}" in str(info.value) and "expands only in" in str(info.value)
    assert SECRET_ENV["AWS_SECRET_ACCESS_KEY"] not in str(info.value)


def test_a_variable_expands_in_the_judge_and_embedder_specs_and_the_cache_dir():
    cfg = parse_config("rag:\n  eval:\n    model: ${JUDGE_LLM_REF}\n"
                       "    embedder: 'openai:e3@${JUDGE_URL}'\n    cache: {dir: '${CACHE}/ragmeter'}\n",
                       env=SECRET_ENV)
    assert cfg.eval.judge == "openai:m@http://127.0.0.1:9/v1"
    assert cfg.eval.embedder == "openai:e3@http://127.0.0.1:9/v1"
    assert cfg.eval.cache.dir == "/tmp/c/ragmeter"
    cfg = parse_config("rag:\n  eval:\n    judge: 'openai:m@http://admin:${PW}@127.0.0.1:9/v1'\n", env=SECRET_ENV)
    assert cfg.eval.judge == "openai:m@http://admin:pw-1234@127.0.0.1:9/v1"


def test_extra_body_reaches_the_judge_backend():
    # server-specific request fields (llama-cpp-python's server applies a repeat penalty unless told)
    from ragmeter.cli._backends import judge_config

    cfg = parse_config("rag:\n  eval:\n    judge: openai:qwen@http://127.0.0.1:8080/v1\n"
                       "    extra_body: {repeat_penalty: 1.0}\n")
    jc = judge_config(cfg.rag.eval)
    assert jc is not None and jc.backend["extra_body"] == {"repeat_penalty": 1.0}
    assert jc.build().backend.extra_body == {"repeat_penalty": 1.0}
    plain = judge_config(parse_config("rag:\n  eval:\n    judge: openai:qwen@http://127.0.0.1:8080/v1\n").rag.eval)
    assert plain is not None and "extra_body" not in plain.backend  # nothing extra is sent by default


def test_extra_body_must_be_a_mapping():
    with pytest.raises(InputError, match="extra_body"):
        parse_config("rag:\n  eval:\n    extra_body: [1, 2]\n")
