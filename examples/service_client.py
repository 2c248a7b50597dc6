"""Talk to a running recap memory service with the Python client: a session, an agent's
turns with large tool outputs, the compaction they cause (seen through the live events),
the context to send the model within a hard cap, the summary chain and the stats.

    recap serve &          # or `make run`, in another terminal
    python examples/service_client.py [--url http://127.0.0.1:8000] [--api-key KEY]
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from typing import Any

from recap_memory.client import (
    Busy,
    Client,
    Event,
    SummarizationFailed,
    SummarizationFinished,
    SummarizationSkipped,
)

TURNS = 24


def turn(n: int) -> list[dict[str, Any]]:
    """One agent turn: a question, a tool call, its (large) output, an answer."""
    call = {"id": f"call_{n}", "type": "function"}
    call["function"] = {"name": "fetch_logs", "arguments": f'{{"service": "api-{n % 4}"}}'}
    log = "\n".join(
        f"14:{m:02d}:07Z api-{n % 4} ERROR pool_wait_ms={900 + m * 13} shard={m % 5}"
        for m in range(50)
    )
    return [
        {"role": "user", "content": f"Question {n}: why is api-{n % 4} slow?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{n}", "content": log},
        {"role": "assistant", "content": f"Turn {n}: the payments-db pool is saturated."},
    ]


def watch(recap: Client, session_id: str, events: Iterator[Event]) -> None:
    """Print the session's events until a pass folds messages into a summary (or fails).
    A pass that found nothing worth folding is followed by one compaction on demand."""
    asked = False
    for event in events:
        print(f"event {event.event}")
        if isinstance(event, SummarizationFinished):
            change = event.context
            print(f"  messages {event.summary.episode_range} folded into a summary:")
            print(f"  context {change.chars_before} -> {change.chars_after} chars")
            return
        done = asked and isinstance(event, SummarizationSkipped)
        if done or isinstance(event, SummarizationFailed):
            return
        if isinstance(event, SummarizationSkipped):
            asked = True
            with contextlib.suppress(Busy):  # a pass is running already: its events follow
                recap.compact(session_id)  # compact now, even under the threshold


def main() -> None:
    """Run the example against the service at ``--url``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("RECAP_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--api-key", default=os.environ.get("RECAP_API_KEY"))
    parser.add_argument("--keep", action="store_true", help="keep the session afterwards")
    args = parser.parse_args()

    with Client(args.url, api_key=args.api_key) as recap:
        session = recap.create_session(title="incident", metadata={"example": True})
        print(f"session {session.id}")
        events = recap.events(session.id)
        print(f"event {next(events).event}")  # session.state: the stream is listening
        due = False
        for n in range(TURNS):
            appended = recap.append(session.id, turn(n))  # retried safely if need be
            due = due or appended.due
        print(f"appended {TURNS * 4} messages; a compaction became due: {due}")
        if not due:  # a service with a high threshold: compact on demand
            recap.compact(session.id)
        watch(recap, session.id, events)
        events.close()

        context = recap.context(session.id, max_tokens=4_000)
        print(f"context: {context.message_count} messages, {context.tokens} tokens (cap 4000)")
        for row in recap.summaries(session.id):
            print(f"summary {row.episode_range}: {row.chars} chars ({row.strategy})")
        print(f"stats: {recap.stats().summary}")
        if not args.keep:
            recap.delete_session(session.id)


if __name__ == "__main__":
    main()
