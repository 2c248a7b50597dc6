"""Every language is kept as written: accents, Cyrillic, Chinese and Japanese survive the
extractive summary, and scripts without spaces are segmented so their content is chosen."""

from __future__ import annotations

import pytest

from recap_memory import Budget, Compactor, Policy, Trigger
from recap_memory.eval.readability import readable_share
from recap_memory.summarizers import ExtractiveSummarizer, FoldRequest
from recap_memory.summarizers.text import words
from tests.conftest import assistant, user

NAMES = {
    "de": ("München", "Lübeck", "Königstraße", "Jülide"),
    "fr": ("Besançon", "Hélène", "Théo", "Préfecture"),
    "ru": ("Новосибирск", "Татьяна", "Дмитрий", "Чехова"),
    "zh": ("成都", "上海", "四川大学", "小雨"),
    "ja": ("札幌", "大阪", "北海道大学", "美咲"),
}
CHATS = {
    "de": [
        "Ich ziehe nächsten Monat von München nach Lübeck, in die Königstraße 12.",
        "Schön! Mein Bruder wohnt in Lübeck und arbeitet bei der Hafenbehörde.",
        "Meine Tochter Jülide fängt dort im September mit der Grundschule an.",
        "Die Grundschule am Dom hat einen sehr guten Ruf für Musikunterricht.",
    ],
    "fr": [
        "Je déménage à Besançon le 3 février, rue de la Préfecture numéro 8.",
        "Très bien ! Ma sœur Hélène y enseigne le français au lycée Victor-Hugo.",
        "Mon fils Théo commencera le conservatoire en septembre, au piano.",
        "Le conservatoire de Besançon organise un concert chaque été à la citadelle.",
    ],
    "ru": [
        "Я переезжаю в Новосибирск в марте, на улицу Ленина, дом 15.",
        "Отлично! Моя сестра Татьяна работает там в библиотеке имени Чехова.",
        "Мой сын Дмитрий пойдёт в музыкальную школу в сентябре, учиться на скрипке.",
        "В Новосибирске большой оперный театр, туда стоит сходить зимой.",
    ],
    "zh": [
        "我下个月要从上海搬到成都，新地址是锦江区红星路十二号。",
        "太好了！我姐姐在成都的四川大学教化学，已经十年了。",
        "我女儿小雨九月开始在成都学钢琴，老师姓王。",
        "成都的火锅很有名，周末可以去宽窄巷子逛一逛。",
    ],
    "ja": [
        "来月、大阪から札幌に引っ越します。新しい住所は中央区北一条西五丁目です。",
        "いいですね！私の兄は札幌の北海道大学で物理を教えています。",
        "娘の美咲は九月から札幌でバイオリンを習い始めます。",
        "札幌の雪まつりは二月にあって、とても有名です。",
    ],
}


def conversation(lines: list[str]) -> list:
    history = []
    for n, line in enumerate(lines * 3):
        history.append(user(line) if n % 2 == 0 else assistant(line))
    return history


@pytest.mark.parametrize("language", sorted(CHATS))
def test_the_summary_keeps_every_letter_as_written(language: str):
    lines = CHATS[language]
    summary = ExtractiveSummarizer().summarize(FoldRequest(conversation(lines), 400))
    assert summary, "the summary is not empty"
    pieces = [line.split(": ", 1)[1] for line in summary.splitlines() if ": " in line]
    source = "\n".join(lines)
    for piece in pieces:
        for part in piece.split(" … "):
            assert part in source, f"{part!r} is not written as in the conversation"
    assert readable_share(summary, source) >= 0.8


@pytest.mark.parametrize("language", sorted(CHATS))
def test_a_compacted_chat_in_any_language_keeps_its_names(language: str):
    history = conversation(CHATS[language])
    policy = Policy(trigger=Trigger(chars=200), keep=Budget(chars=60))
    result = Compactor(policy=policy).compact_sync(history)
    assert result.report.compacted and result.report.path == "summarized"
    text = result.messages[0].text
    assert sum(name in text for name in NAMES[language]) >= 2, text


def test_scripts_without_spaces_are_segmented_into_comparable_units():
    assert "成都" in words("我下个月要从上海搬到成都")
    assert "札幌" in words("大阪から札幌に引っ越します")
    assert words("Königstraße") == ["königstrasse"]
    assert "новосибирск" in words("Я переезжаю в Новосибирск")
