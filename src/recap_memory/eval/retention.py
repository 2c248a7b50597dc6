"""Answer retention, exactly as defined in the evaluation data's README.

*exact*: the normalized answer is a substring of the normalized context.
*token recall*: the share of the answer's words (stop words removed) found
among the context's words. Normalization: lowercase, every character other
than a-z and 0-9 turned into a space, spaces collapsed.
"""

from __future__ import annotations

import re

STOP_WORDS = frozenset(
    """a an the of to in on at for and or is was were be been it its this that with by from as
    i you he she they we my your her his their our me him them do did does have has had not no
    yes what when where who how which would could should will can may might about after before
    than then so if but just""".split()
)
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def normalize(text: str) -> str:
    """Lowercase, non a-z0-9 characters as spaces, spaces collapsed."""
    return " ".join(_NON_ALNUM.sub(" ", text.lower()).split())


class Context:
    """A context the model would see, prepared once for many answer checks."""

    def __init__(self, text: str) -> None:
        self.normalized = f" {normalize(text)} "
        self.words = frozenset(self.normalized.split())

    def exact(self, answer: str) -> bool:
        """Whether the normalized answer is a substring of the normalized context."""
        target = normalize(answer)
        return bool(target) and target in self.normalized

    def token_recall(self, answer: str) -> float | None:
        """Share of the answer's content words present; None when it has none."""
        words = [w for w in normalize(answer).split() if w not in STOP_WORDS]
        if not words:
            return None
        return sum(w in self.words for w in words) / len(words)
