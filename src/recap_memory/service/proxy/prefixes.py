"""Summaries made for prefixes of conversations sent whole with every request.

A stateless client re-sends its growing history each turn. The compacted head
(system messages and the summary) made for the first ``k`` messages is kept
under the chained digest of message ``k``; the next request that begins with
the same ``k`` messages starts from that head and folds only what is new.
Per process, least recently used first out.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

Head = list[dict[str, Any]]


class PrefixSummaries:
    """At most ``size`` compacted heads, keyed by tenant and digest."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._heads: OrderedDict[tuple[str, str], Head] = OrderedDict()

    def longest(self, tenant: str, digests: Sequence[str]) -> tuple[int, Head]:
        """How many leading messages the longest known head stands for, and that head
        (``0, []`` when none is known)."""
        for count in range(len(digests), 0, -1):
            key = (tenant, digests[count - 1])
            if key in self._heads:
                self._heads.move_to_end(key)
                return count, self._heads[key]
        return 0, []

    def keep(self, tenant: str, digest: str, head: Head) -> None:
        """Remember ``head`` as the compacted form of the messages up to ``digest``."""
        self._heads[(tenant, digest)] = head
        self._heads.move_to_end((tenant, digest))
        while len(self._heads) > self.size:
            self._heads.popitem(last=False)
