"""Text as the extractive strategy reads it, in any language.

Sentences are cut at ``. ! ?`` (and ``。！？`` of scripts written without spaces) and at
line breaks; a long sentence is cut again at its clauses (``;``, ``, and``, ``, but``…)
so a summary can take a whole clause instead of a whole paragraph. Words are Unicode
words, casefolded and NFKC-normalized (``München`` stays ``münchen``); a run of Chinese,
Japanese or Korean characters counts as its overlapping character pairs, the usual way
to compare text in scripts without spaces. Nothing here rewrites text: every piece is a
slice of what was written.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|(?<=[.!?][\"')\]”’])\s+|(?<=[。！？])")
"""Where a sentence may end: after ``. ! ?`` (a closing quote allowed) and a space, or
after the full-width marks of scripts written without spaces."""
_CLAUSE = re.compile(
    r"(?<=[;:,])\s+|\s[-–—](?=\s)"
    r"|\s+(?=(?:and|but|so|because|which|while|though|although|when|where|who|since)\s)"
)
"""Where a clause may begin: after ``; : ,`` or a dash, before a conjunction."""
_WORD = re.compile(r"\w+(?:['’.\-/:@]\w+)*", re.UNICODE)
_WIDE = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]+"
)
LONGEST_PIECE = 320
"""No piece is longer: a sentence without clause marks is cut at a space near here."""
MIN_CLAUSE_WORDS = 4
"""A clause shorter than this stays with its neighbour: a piece reads on its own."""
_FILLER = re.compile(
    r"^(?:(?:oh|ooh|wow|whoa|hey|hi|hello|yeah|yep|yes|haha+|lol|ok|okay|well|aw+|"
    r"hmm+|ah|um|omg|great|cool|nice|awesome|thanks|thank you|sure|totally|congrats)"
    r"(?:\s+\w+)?[,!.]+\s+)+",
    re.IGNORECASE,
)


def sentences(text: str) -> Iterator[str]:
    """The sentences and lines of ``text``, whole (see :func:`clauses`)."""
    yield from _split_sentences(text)


def clauses(text: str) -> Iterator[tuple[str, bool]]:
    """The clauses of ``text``, each with whether it starts a new sentence (a clause that
    does not continues the one before it). A bracketed line stays whole; a clause still
    too long comes in pieces cut at a space."""
    for sentence in _split_sentences(text):
        if sentence[0] == "[" and sentence[-1] == "]":
            yield sentence, True
            continue
        for n, clause in enumerate(_clauses(sentence)):
            for m, piece in enumerate(_pieces(clause)):
                yield piece, n == 0 and m == 0


def _split_sentences(text: str) -> Iterator[str]:
    """Lines cut at sentence ends; a piece that starts in lower case (``e.g. this``,
    ``Dr. smith``) stays with the sentence before it."""
    for line in text.splitlines():
        current = ""
        for piece in _SENTENCE_END.split(line):
            piece = piece.strip()
            if not piece:
                continue
            if current and piece[0].islower():
                current = f"{current} {piece}"
                continue
            if current:
                yield current
            current = piece
        if current:
            yield current


def _clauses(sentence: str) -> list[str]:
    """``sentence`` cut after its clause marks (nothing dropped: the pieces, joined by
    spaces, are the sentence); a part too short to read alone stays with the part before
    it (the first with the one after)."""
    cuts = [m.end() for m in _CLAUSE.finditer(sentence)]
    parts = [sentence[a:b].strip() for a, b in zip([0, *cuts], [*cuts, len(sentence)], strict=True)]
    merged: list[str] = []
    for part in parts:
        if not part:
            continue
        short = len(words(part)) < MIN_CLAUSE_WORDS
        if merged and (short or len(words(merged[-1])) < MIN_CLAUSE_WORDS):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return merged


def _pieces(text: str) -> Iterator[str]:
    while len(text) > LONGEST_PIECE:
        split = text.rfind(" ", LONGEST_PIECE // 2, LONGEST_PIECE)
        split = split if split > 0 else LONGEST_PIECE
        yield text[:split].strip()
        text = text[split:].strip()
    if text:
        yield text


def without_filler(sentence: str) -> str:
    """``sentence`` without a leading interjection (``Oh wow, …``, ``Haha! …``) when what
    follows still reads as a sentence; the rest is untouched."""
    match = _FILLER.match(sentence)
    if match is None:
        return sentence
    rest = sentence[match.end() :]
    return rest[0].upper() + rest[1:] if len(words(rest)) >= 3 else sentence


_REPEATED_WORD = re.compile(r"\b(\w[\w'-]*)(?:[ ,]+\1\b){2,}", re.IGNORECASE)


def collapse_repeats(text: str) -> str:
    """A word said three times or more in a row written once with its count
    (``words words words words`` becomes ``words ×4``), like a repeated log line."""
    return _REPEATED_WORD.sub(lambda m: f"{m[1]} ×{len(m[0].split())}", text)


def normal(text: str) -> str:
    """``text`` casefolded and NFKC-normalized (compatibility forms folded)."""
    return unicodedata.normalize("NFKC", text).casefold()


def words(text: str) -> list[str]:
    """The words of ``text``, normalized; runs of CJK characters as character pairs."""
    out: list[str] = []
    for token in _WORD.findall(normal(text)):
        wide = _WIDE.findall(token)
        if not wide:
            out.append(token)
            continue
        rest = _WIDE.sub(" ", token).split()
        out.extend(rest)
        for run in wide:
            out.extend(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    return out
