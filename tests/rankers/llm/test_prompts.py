"""Prompt templates (sourcesum.rankers.llm.prompts): the paper's presets byte for byte
(``real_data``: its prompt files), and template files pinned by content, without an instance."""

from __future__ import annotations

import hashlib

import pytest
from sourcesum.data.sourcesum import read_prompt
from sourcesum.errors import ParameterError
from sourcesum.rankers import create_ranker
from sourcesum.rankers.llm.prompts import NATIVE_SCALES, canonical_template, load_template
from sourcesum.rankers.llm.ranker import LLMJudgeRanker
from sourcesum.rankers.llm.scale import Scale
from sourcesum.runner.configs import Configuration
from support.judge import TEMPLATE


@pytest.mark.real_data  # the paper's prompt files
def test_presets_render_the_papers_prompts_byte_for_byte():
    for version in ("v1", "v2"):
        template, spec = load_template(version, listwise=False)
        rendered = template.render("SUMMARY", Scale.parse(NATIVE_SCALES[version]), sentence="SENTENCE")
        assert rendered.replace("SUMMARY", "{summary}").replace("SENTENCE", "{sentence}") == read_prompt(
            version
        )
        assert spec == version and "Suhara" in template.source
    template, _ = load_template("v2", listwise=False)
    text = template.render("S {sentence}", Scale.parse("0-9"), sentence="X")
    assert "from 0 to 9,  0 with" in text and "and 9 with" in text and "Summary: S {sentence}\n" in text


def test_user_template_file_is_pinned_by_content(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("Rate {sentence} for {summary} from {lo} to {hi}: ")
    template, spec = load_template(str(path), listwise=False)
    assert spec.startswith(f"{path}#sha256=")
    assert template.render("S", Scale.parse("1-5"), sentence="X") == "Rate X for S from 1 to 5: "
    ranker = create_ranker("llm_judge", template=str(path))
    assert ranker.get_params()["template"] == spec
    path.write_text("Rate {sentence} for {summary}, changed: ")
    with pytest.raises(ParameterError, match="has changed"):
        create_ranker("llm_judge", template=spec)
    (tmp_path / "bad.txt").write_text("no placeholders")
    with pytest.raises(ParameterError, match="needs"):
        create_ranker("llm_judge", template=str(tmp_path / "bad.txt"))
    with pytest.raises(ParameterError, match="does not fit"):
        create_ranker("llm_judge", mode="listwise", template="v2")
    with pytest.raises(ParameterError, match="base_url"):
        create_ranker("llm_judge", backend="openai", template=str(path))


def test_canonicalize_pins_template_files_without_an_instance(tmp_path, monkeypatch):
    """The canonical template (hence label and key) comes from the class: presets and auto by
    name (no prompt file read), a file pinned by the sha256 of its content, ``~`` expanded."""
    path = tmp_path / "t.txt"
    path.write_text(TEMPLATE)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    made = create_ranker("llm_judge", template=str(path)).get_params()

    def no_instances(*args, **kwargs):
        raise AssertionError("llm_judge was instantiated")

    monkeypatch.setattr(LLMJudgeRanker, "__new__", no_instances)
    config = Configuration.of("llm_judge", {"template": str(path)})
    assert config.params == made and config.params["template"] == f"{path}#sha256={digest}"
    assert f"template={path}#sha256={digest}" in config.label
    for name in ("auto", "v1", "v2", "listwise"):  # no prompt file is read: works without data
        assert canonical_template(name) == name
        assert Configuration.of("llm_judge", {"template": name}).params["template"] == name
    monkeypatch.setenv("HOME", str(tmp_path))
    assert canonical_template("~/t.txt") == f"{path}#sha256={digest}"
    assert canonical_template("~/t.txt#sha256=0123") == f"{path}#sha256=0123"  # pinned: as given
    before = config.entry_key("synth_alpha_sys", "0" * 64)
    path.write_text(TEMPLATE + "Answer: ")
    changed = Configuration.of("llm_judge", {"template": str(path)})
    assert changed.params["template"] != config.params["template"]  # new content, new key
    assert changed.entry_key("synth_alpha_sys", "0" * 64) != before
    with pytest.raises(ParameterError, match="not a preset"):
        Configuration.of("llm_judge", {"template": str(tmp_path / "missing.txt")})
