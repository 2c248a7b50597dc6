"""The rolling run through the memory service: sessions fed over HTTP, the background
worker compacting, the context read back from the API.

The app runs in this process on a SQLite file in a temporary folder, reached with
httpx over ASGI (the same requests a client sends over the network); it needs the
``[server]`` extra. Each conversation becomes a session; its messages are appended
one per request while the embedded worker compacts whenever due; at the end the
run waits for the worker to settle and scores ``GET /sessions/{id}/context``.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from recap_memory.errors import ConfigurationError
from recap_memory.eval import locomo
from recap_memory.eval.budget import foldable_chars
from recap_memory.eval.rolling import RollingScore, score_final
from recap_memory.messages import Message, from_openai, to_openai

SETTLE_S = 120.0


def evaluate_locomo(
    samples: Sequence[Mapping[str, Any]],
    trigger: float,
    keep: float,
    advance: Callable[[], None] = lambda: None,
) -> RollingScore:
    """Each LoCoMo conversation fed to the service one message per request."""
    return asyncio.run(_evaluate(samples, trigger, keep, advance))


async def _evaluate(
    samples: Sequence[Mapping[str, Any]],
    trigger: float,
    keep: float,
    advance: Callable[[], None],
) -> RollingScore:
    try:
        import httpx

        from recap_memory.service import ServiceSettings, create_app
        from recap_memory.settings import SummarizationSettings
    except ModuleNotFoundError as exc:
        raise ConfigurationError(
            f"--through-service runs the memory service: pip install 'recap-memory[server]' "
            f"({exc.name} is missing)"
        ) from exc
    result: RollingScore | None = None
    with tempfile.TemporaryDirectory() as folder:
        for n, sample in enumerate(samples):
            messages = locomo.conversation_messages(sample)
            whole = foldable_chars(messages)
            summarization = SummarizationSettings(
                threshold_chars=max(2, int(whole * trigger)),
                keep_chars=max(1, int(whole * keep)),
            )
            settings = ServiceSettings(
                database_url=f"sqlite:///{Path(folder) / f'rolling-{n}.db'}",
                poll_interval_s=0.05,
            )
            app = create_app(settings, summarization=summarization)
            async with app.router.lifespan_context(app):
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(
                    transport=transport, base_url="http://127.0.0.1:8000", timeout=SETTLE_S
                ) as client:
                    context, worst, passes, call_ms = await _feed(
                        client, messages, summarization.threshold_chars
                    )
            one = score_final(
                sample, messages, context, worst=worst, passes=passes, call_ms=call_ms
            )
            result = one if result is None else result + one
            advance()
    assert result is not None, "no conversation to evaluate"
    return result


async def _feed(
    client: Any, messages: Sequence[Message], trigger_chars: int
) -> tuple[list[Message], float, int, float]:
    """Append ``messages`` one per request; the settled context, the largest context over
    the run ÷ the trigger (it may pass it while a background pass is pending), how many
    summary passes landed, and the mean milliseconds per append."""
    created = (await client.post("/sessions", json={"title": "rolling"})).raise_for_status()
    session = created.json()["id"]
    worst, spent = 0.0, 0.0
    for message in messages:
        body = {"messages": [to_openai(message, recap_fields=False)]}
        started = time.perf_counter()
        (await client.post(f"/sessions/{session}/messages", json=body)).raise_for_status()
        spent += time.perf_counter() - started
        state = (await client.get(f"/sessions/{session}")).json()
        worst = max(worst, state["context_chars"] / trigger_chars)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_S
    while True:
        state = (await client.get(f"/sessions/{session}")).json()
        if not (state["due"] or state["compacting"]) or loop.time() > deadline:
            break
        await asyncio.sleep(0.05)
    context = (await client.get(f"/sessions/{session}/context")).json()
    rows = (
        await client.get(f"/sessions/{session}/summaries", params={"include_superseded": True})
    ).json()
    view = [from_openai({k: v for k, v in m.items() if k not in ("id", "pinned")})
            for m in context["messages"]]  # fmt: skip
    return view, worst, len(rows), spent * 1000 / max(1, len(messages))
