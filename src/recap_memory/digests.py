"""Chained digests of a conversation's messages: the same history gives the same digests.

Digest ``i`` hashes digest ``i-1`` with message ``i``, so it names the whole
history up to that message: a client re-sending its conversation every turn
produces, for the part already seen, exactly the digests of last time, and
the first differing message changes every digest after it. recap uses them
as the id of each message a client sends without one of its own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from recap_memory.messages import Message, to_openai

DIGEST_CHARS = 32


def chained(messages: Sequence[Message], head: str = "") -> list[str]:
    """The digest of each message, the first one chained to ``head`` (a previous digest, or
    ``""`` for a conversation's start)."""
    digests = []
    for message in messages:
        content = json.dumps(
            to_openai(message.replace(id=None), recap_fields=False),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        head = hashlib.sha256(f"{head}\n{content}".encode()).hexdigest()[:DIGEST_CHARS]
        digests.append(head)
    return digests
