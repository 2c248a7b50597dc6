"""The HTTP backends against a real server on loopback: request shape, parsing, usage,
and every failure kind, with and without retries."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from recap_memory import BackendError, Budget, Compactor, ContextOverflowError, Policy, Trigger
from recap_memory.llm import ModelOptions, OllamaModel, OpenAIModel, Retrying, RetryPolicy
from recap_memory.llm.http import HTTPChatModel, retry_after
from recap_memory.summarizers import LLMSummarizer
from recap_memory.testing.model_server import Die, Garbage, Hang, ModelServer, Reply, Status
from tests.conftest import assistant, user

ASK = [{"role": "user", "content": "Summarize: the db pool was exhausted at 09:14."}]
OPTIONS = ModelOptions()


def openai(url: str, **kw: float) -> HTTPChatModel:
    return OpenAIModel("gpt-test", base_url=url + "/v1", api_key="sk-test", **kw)  # type: ignore[arg-type]


def ollama(url: str, **kw: float) -> HTTPChatModel:
    return OllamaModel("qwen2.5:3b", base_url=url, **kw)  # type: ignore[arg-type]


BACKENDS = pytest.mark.parametrize("backend", [openai, ollama], ids=["openai", "ollama"])
Backend = Callable[..., HTTPChatModel]


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


async def test_openai_request_shape_and_parsing(server: ModelServer):
    server.then(Reply("Pool exhausted at 09:14.", prompt_tokens=77, completion_tokens=9))
    completion = await openai(server.url).execute(ASK, OPTIONS)

    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body == {
        "model": "gpt-test",
        "messages": ASK,
        "temperature": 0.2,
        "max_tokens": 500,
        "stream": False,
    }
    assert completion.text == "Pool exhausted at 09:14."
    assert (completion.prompt_tokens, completion.completion_tokens) == (77, 9)
    assert completion.model == "gpt-test" and completion.duration_ms > 0


async def test_ollama_request_shape_and_parsing(server: ModelServer):
    server.then(Reply("Pool exhausted at 09:14.", prompt_tokens=61, completion_tokens=8))
    completion = await ollama(server.url, context_window=16384).execute(ASK, OPTIONS)

    (request,) = server.requests
    assert request.path == "/api/chat"
    assert "authorization" not in request.headers
    assert request.body == {
        "model": "qwen2.5:3b",
        "messages": ASK,
        "stream": False,
        "options": {"temperature": 0.2, "num_predict": 500, "num_ctx": 16384},
    }
    assert completion.text == "Pool exhausted at 09:14."
    assert (completion.prompt_tokens, completion.completion_tokens) == (61, 8)


@BACKENDS
async def test_a_cut_off_answer_is_marked_truncated(server: ModelServer, backend: Backend):
    server.then(Reply("The pool was", finish="length"))
    assert (await backend(server.url).execute(ASK, OPTIONS)).truncated


@BACKENDS
async def test_a_hanging_server_times_out(server: ModelServer, backend: Backend):
    server.then(Hang(10))
    started = time.perf_counter()
    with pytest.raises(BackendError) as caught:
        await backend(server.url, timeout=0.3).execute(ASK, OPTIONS)
    assert caught.value.kind == "timeout" and caught.value.retryable
    assert time.perf_counter() - started < 5
    assert "0.3s" in str(caught.value)


@BACKENDS
async def test_a_server_dying_mid_response_is_a_connection_error(
    server: ModelServer, backend: Backend
):
    server.then(Die())
    with pytest.raises(BackendError) as caught:
        await backend(server.url).execute(ASK, OPTIONS)
    assert caught.value.kind == "connection" and caught.value.retryable


@BACKENDS
async def test_connection_refused_says_what_to_check(backend: Backend):
    with ModelServer() as gone:
        url = gone.url
    with pytest.raises(BackendError) as caught:
        await backend(url).execute(ASK, OPTIONS)
    assert caught.value.kind == "connection" and caught.value.retryable
    assert "is the server running" in str(caught.value)


@BACKENDS
@pytest.mark.parametrize(
    ("behaviour", "kind", "retryable"),
    [
        (Status(500), "http", True),
        (Status(503, headers=(("Retry-After", "2"),)), "http", True),
        (Status(400, {"error": {"message": "bad request"}}), "http", False),
        (Status(429, headers=(("Retry-After", "1"),)), "rate_limit", True),
        (Garbage(), "malformed", True),
        (Status(200, {"unexpected": "shape"}), "malformed", True),
    ],
    ids=["500", "503", "400", "429", "not-json", "wrong-shape"],
)
async def test_failures_are_classified(server, backend, behaviour, kind, retryable):
    server.then(behaviour)
    with pytest.raises(BackendError) as caught:
        await backend(server.url).execute(ASK, OPTIONS)
    assert (caught.value.kind, caught.value.retryable) == (kind, retryable)
    if isinstance(behaviour, Status) and behaviour.code >= 400:
        assert caught.value.status == behaviour.code
    if behaviour.__class__ is Status and behaviour.headers:
        assert caught.value.retry_after == float(behaviour.headers[0][1])


@BACKENDS
@pytest.mark.parametrize(
    ("code", "advice"), [(401, "API key"), (404, "model name and the base URL")]
)
async def test_client_errors_say_what_to_fix(server, backend, code, advice):
    server.then(Status(code, {"error": "model 'qwen9' not found"}))
    with pytest.raises(BackendError) as caught:
        await backend(server.url).execute(ASK, OPTIONS)
    assert advice in str(caught.value) and "qwen9" in str(caught.value)
    assert not caught.value.retryable


@BACKENDS
async def test_a_context_length_refusal_is_an_overflow(server: ModelServer, backend: Backend):
    message = "This model's maximum context length is 8192 tokens"
    server.then(Status(400, {"error": {"message": message}}))
    with pytest.raises(ContextOverflowError):
        await backend(server.url).execute(ASK, OPTIONS)


@BACKENDS
async def test_retries_honour_retry_after_then_succeed(server: ModelServer, backend: Backend):
    server.then(Status(429, headers=(("Retry-After", "1"),)), Status(502), Reply("Recovered."))
    model = Retrying(backend(server.url), RetryPolicy(attempts=3, backoff_s=0.05))
    started = time.perf_counter()
    completion = await model.execute(ASK, OPTIONS)
    assert completion.text == "Recovered." and completion.attempts == 3
    assert len(server.requests) == 3
    assert time.perf_counter() - started >= 1.0  # waited as the server asked


@BACKENDS
async def test_retries_are_bounded(server: ModelServer, backend: Backend):
    server.default = Status(500)
    model = Retrying(backend(server.url), RetryPolicy(attempts=3, backoff_s=0.01))
    with pytest.raises(BackendError) as caught:
        await model.execute(ASK, OPTIONS)
    assert caught.value.attempts == 3 and len(server.requests) == 3


@BACKENDS
async def test_what_a_retry_cannot_help_is_not_retried(server: ModelServer, backend: Backend):
    server.then(Status(400), Status(429, headers=(("Retry-After", "3600"),)))
    model = Retrying(backend(server.url), RetryPolicy(attempts=3, backoff_s=0.01))
    with pytest.raises(BackendError):
        await model.execute(ASK, OPTIONS)
    assert len(server.requests) == 1
    started = time.perf_counter()
    with pytest.raises(BackendError) as caught:  # asked to wait an hour: give up at once
        await model.execute(ASK, OPTIONS)
    assert caught.value.kind == "rate_limit" and time.perf_counter() - started < 1


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after("7") == 7.0
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert retry_after("soon") is None and retry_after(None) is None


@BACKENDS
def test_compaction_through_a_server_records_its_usage(server: ModelServer, backend: Backend):
    summary = "**Investigating:** slow checkout. **Current state:** pool size raised to 50."
    server.default = Reply(summary, prompt_tokens=900, completion_tokens=31)
    history = []
    for n in range(12):
        history += [user(f"step {n}: " + "check the payments pool " * 20), assistant("ok " * 40)]
    policy = Policy(trigger=Trigger(chars=4_000), keep=Budget(chars=1_000))
    model = Retrying(backend(server.url, context_window=2048))
    result = Compactor(LLMSummarizer(model), policy, fallback=None).compact_sync(history)

    assert result.report.path == "summarized", result.report.reason
    assert summary in result.messages[0].text
    assert result.report.model_calls == len(server.requests) >= 1
    usage = result.report.usage[0]
    assert (usage.prompt_tokens, usage.completion_tokens) == (900, 31)
    assert usage.model in ("gpt-test", "qwen2.5:3b") and usage.duration_ms > 0


@BACKENDS
async def test_a_reply_streams_in_pieces(server: ModelServer, backend: Backend):
    server.then(Reply("The pool was exhausted at 09:14 by the batch job."))
    model = Retrying(backend(server.url))
    pieces = [piece async for piece in model.stream(ASK, OPTIONS)]
    assert len(pieces) == 10 and "".join(pieces).strip() == (
        "The pool was exhausted at 09:14 by the batch job."
    )
    assert server.requests[-1].body["stream"] is True


@BACKENDS
async def test_a_stream_that_fails_says_why(server: ModelServer, backend: Backend):
    server.then(Status(500))
    with pytest.raises(BackendError) as caught:
        _ = [piece async for piece in backend(server.url).stream(ASK, OPTIONS)]
    assert caught.value.kind == "http" and caught.value.status == 500
