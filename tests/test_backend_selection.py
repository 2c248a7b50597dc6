"""Choosing a backend by spec and environment, and the LangChain chat-model backend."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from recap_memory import Budget, Compactor, ConfigurationError, Policy, Trigger
from recap_memory.integrations.scripted import ScriptedChatModel
from recap_memory.llm import (
    LangChainModel,
    ModelOptions,
    OllamaModel,
    OpenAIModel,
    Retrying,
    make_model,
)
from recap_memory.llm.spec import ModelSpec, parse_spec
from recap_memory.settings import LLMSettings
from recap_memory.summarizers import LLMSummarizer
from tests.conftest import assistant, user

SEED_VARIABLES = (
    "RECAP_LLM", "UTILITY_MODEL", "RECAP_LLM_URL", "INFERENCE_SERVICE_URL", "OLLAMA_BASE_URL",
    "OPENAI_BASE_URL", "OPENAI_API_KEY", "RECAP_LLM_API_KEY", "RECAP_FALLBACK",
)  # fmt: skip


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name in SEED_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("openai:gpt-4o-mini", ModelSpec("openai", "gpt-4o-mini")),
        ("ollama:qwen2.5:3b", ModelSpec("ollama", "qwen2.5:3b")),
        ("llamacpp:/models/m.gguf", ModelSpec("llamacpp", "/models/m.gguf")),
        ("langchain:anthropic:claude-haiku", ModelSpec("langchain", "anthropic:claude-haiku")),
        ("extractive", None),
    ],
)
def test_specs_parse(spec, parsed):
    assert parse_spec(spec) == parsed


@pytest.mark.parametrize("spec", ["gpt-4o", "vertex:gemini", "ollama:", ""])
def test_bad_specs_say_how_to_write_one(spec):
    with pytest.raises(ConfigurationError, match="PROVIDER:MODEL"):
        parse_spec(spec)


def test_design_b_variables_select_ollama(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("UTILITY_MODEL", "qwen2.5:3b")
    monkeypatch.setenv("INFERENCE_SERVICE_URL", "http://10.0.0.7:11434")
    model = make_model()
    assert isinstance(model, Retrying) and isinstance(model.model, OllamaModel)
    assert model.model.model == "qwen2.5:3b" and model.model.url == "http://10.0.0.7:11434/api/chat"


def test_recap_variables_win_and_openai_reads_its_key(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("UTILITY_MODEL", "qwen2.5:3b")
    monkeypatch.setenv("RECAP_LLM", "openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    model = make_model()
    assert isinstance(model, Retrying) and isinstance(model.model, OpenAIModel)
    assert model.model.headers["Authorization"] == "Bearer sk-from-env"
    assert model.context_window == 128_000  # known for this model


def test_ollama_base_url_and_an_explicit_argument(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://gpu-box:11434")
    built = make_model(LLMSettings(llm="ollama:llama3.2"))
    assert isinstance(built, Retrying) and built.model.url == "http://gpu-box:11434/api/chat"
    built = make_model(LLMSettings(llm="ollama:llama3.2", url="http://other:1"))
    assert isinstance(built, Retrying) and built.model.url == "http://other:1/api/chat"


def test_no_model_configured_means_extractive():
    assert make_model() is None
    assert make_model(LLMSettings(llm="extractive")) is None


def test_the_openai_api_without_a_key_is_refused_up_front():
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        make_model(LLMSettings(llm="openai:gpt-4o-mini"))


def test_bad_settings_values_are_rejected(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RECAP_FALLBACK", "sometimes")
    with pytest.raises(ValueError, match="RECAP_FALLBACK"):
        LLMSettings()


def _history() -> list:
    history = []
    for n in range(10):
        entries = " ".join(f"entry{n}x{k}={k * n + 3}" for k in range(20))
        history += [user(f"turn {n}: please check ledger {n * 7}: {entries}"), assistant("ok")]
    return history


POLICY = Policy(trigger=Trigger(chars=2_000), keep=Budget(chars=500))


async def test_a_langchain_model_writes_the_summary_and_reports_usage():
    usage = {"input_tokens": 812, "output_tokens": 40, "total_tokens": 852}
    reply = AIMessage("The user asked ten times to check ledger totals.", usage_metadata=usage)
    chat = ScriptedChatModel(replies=[reply])
    model = LangChainModel(chat, context_window=4096)
    completion = await model.execute([{"role": "user", "content": "hi"}], ModelOptions())
    assert completion.text.startswith("The user asked")
    assert (completion.prompt_tokens, completion.completion_tokens) == (812, 40)
    assert chat.calls[0][0].type == "human" and chat.calls[0][0].content == "hi"


def test_a_failing_langchain_model_falls_back():
    chat = ScriptedChatModel(replies=[RuntimeError("quota exceeded")])
    result = Compactor(LLMSummarizer(LangChainModel(chat)), POLICY).compact_sync(_history())
    assert result.report.path == "fallback"
    assert "RuntimeError: quota exceeded" in (result.report.reason or "")


def test_a_langchain_model_compacts_a_history():
    chat = ScriptedChatModel(replies=["The user asked repeatedly to check ledger totals."])
    result = Compactor(LLMSummarizer(LangChainModel(chat)), POLICY).compact_sync(_history())
    assert result.report.path == "summarized"
    assert "ledger totals" in result.messages[0].text
    assert result.report.usage[0].prompt_tokens == len(chat.calls[0][0].content) // 4


def test_something_else_is_not_a_langchain_model():
    with pytest.raises(ConfigurationError, match="not a LangChain chat model"):
        LangChainModel(object())
