"""The ``Idempotency-Key`` header: what makes a retried write safe.

A write sent with a key is committed together with its answer; a retry with the
same key and the same request gets that answer (marked ``Idempotent-Replayed``)
and writes nothing, and a different request under a used key is refused.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated

from fastapi import Header, Response
from pydantic import BaseModel

from recap_memory.store import Idempotency

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=200,
        pattern=r"^[\x21-\x7e]+$",
        description="Any unique string (a UUID): a retry with the same key and request "
        "writes nothing more and gets the first answer.",
    ),
]
REPLAYED = "Idempotent-Replayed"


def idempotency(key: str | None, operation: str, body: BaseModel | None) -> Idempotency | None:
    """The key with the fingerprint of ``operation`` (method and path) and ``body``."""
    if key is None:
        return None
    asked = json.dumps(
        [operation, body.model_dump(mode="json") if body else None],
        sort_keys=True,
        separators=(",", ":"),
    )
    return Idempotency(key, hashlib.sha256(asked.encode()).hexdigest())


def mark_replayed(response: Response, replayed: bool) -> None:
    """Say on the response that it repeats an earlier answer."""
    if replayed:
        response.headers[REPLAYED] = "true"
