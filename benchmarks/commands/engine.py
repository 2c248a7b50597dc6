"""``python -m benchmarks engine``: one pass's time against the conversation's size, and the
summarization work of a whole conversation compacted turn by turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from benchmarks import engine as eng
from recap_memory.cli.errors import describe, fail
from recap_memory.cli.output import report_console
from recap_memory.errors import RecapError


def _sizes(text: str) -> tuple[int, ...]:
    """``1k,10k,100k,1M`` (or plain integers) as sizes in characters."""
    scale = {"k": 1_000, "m": 1_000_000}
    try:
        sizes = tuple(
            int(float(p[:-1]) * scale[p[-1].lower()]) if p[-1].lower() in scale else int(p)
            for p in (part.strip() for part in text.split(","))
        )
    except (ValueError, IndexError):
        fail(f"--sizes: expected sizes such as 1k,10k,100k,1M, got {text!r}")
    if len(sizes) < 2 or any(s < 100 for s in sizes) or list(sizes) != sorted(set(sizes)):
        fail("--sizes: at least two increasing sizes of 100 characters or more")
    return sizes


def engine(
    sizes: Annotated[
        str, typer.Option(help="Conversation sizes in characters (the first is the baseline)")
    ] = "1k,10k,100k,1M",
    repeats: Annotated[
        int, typer.Option(min=1, help="Timed passes per size below 1M chars (median)")
    ] = eng.Options.repeats,
    big_repeats: Annotated[
        int, typer.Option(min=1, help="Timed passes per size from 1M chars")
    ] = eng.Options.big_repeats,
    turns: Annotated[
        int, typer.Option(min=4, help="Turns of the generated conversation fed turn by turn")
    ] = eng.Options.turns,
    trigger_chars: Annotated[
        int, typer.Option(min=2, help="Cumulative work: the trigger (scaled down for short ones)")
    ] = eng.Options.trigger_chars,
    keep_chars: Annotated[
        int, typer.Option(min=1, help="Cumulative work: the recent characters kept")
    ] = eng.Options.keep_chars,
    window: Annotated[
        int, typer.Option(min=1_024, help="The fake model's context window in tokens")
    ] = eng.Options.window,
    locomo: Annotated[
        Path | None,
        typer.Option(exists=True, dir_okay=False, help="Also feed this LoCoMo file's first one"),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="Seed of the generated conversations")
    ] = eng.Options.seed,
    profile: Annotated[
        bool | None,
        typer.Option(help="Profile the two largest sizes (default: when super-linear)"),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write the figures as JSON here")] = None,
) -> None:
    """Compaction time vs conversation size, and model input tokens per conversation token
    over a long conversation: recap's cumulative chain vs re-summarizing everything."""
    if keep_chars >= trigger_chars:
        fail("--keep-chars must be below --trigger-chars")
    options = eng.Options(
        _sizes(sizes), repeats, big_repeats, turns, trigger_chars, keep_chars, window, locomo,
        seed, profile,
    )  # fmt: skip
    try:
        figures = eng.run(options)
    except (RecapError, OSError, ValueError, KeyError) as exc:
        fail(describe(exc))
    console = report_console()
    console.print(scaling_table(figures.scaling))
    if figures.scaling.hotspots:
        console.print(hotspot_table(figures.scaling))
    for work in figures.cumulative:
        console.print(work_table(work))
    for row in figures.scaling.rows:
        if row.outcome != "summarized":
            console.print(f"[yellow]{row.chars:,} chars: {row.outcome}[/]", highlight=False)
    console.print(f"Verdict: {engine_verdict(figures)}", highlight=False)
    console.print(f"({figures.seconds:.0f} s)")
    if out:
        out.write_text(json.dumps(figures.as_dict(), indent=2) + "\n", encoding="utf-8")


def engine_verdict(figures: eng.EngineFigures) -> str:
    """The scaling verdict and each conversation's two ratios at its end."""
    parts = [figures.scaling.verdict]
    for work in figures.cumulative:
        final = work.final
        parts.append(
            f"{work.name}: recap {final.recap_ratio:.2f} input tokens per conversation token, "
            f"re-summarize-all {final.baseline_ratio:.2f} "
            f"(×{work.growth('baseline'):.2f} from 50% to 100%)"
        )
    return "; ".join(parts)


def scaling_table(scaling: eng.Scaling) -> Table:
    """Every size's median time, against the smallest size's."""
    base = scaling.rows[0]
    last = scaling.rows[-1].exponent
    table = Table(
        title=f"Engine: one compaction pass (extractive) vs size, baseline {base.chars:,} chars",
        caption=f"{scaling.verdict}; last step {last:.2f}" if last is not None else "",
    )
    for column in ("chars", "msgs", "reps", "median ms", "ms/1k ch", "× size", "× time"):
        table.add_column(column, justify="right")
    table.add_column("per char ×", justify="right")
    table.add_column("exp.", justify="right")
    for row in scaling.rows:
        table.add_row(
            f"{row.chars:,}",
            f"{row.messages:,}",
            str(row.repeats),
            f"{row.median_ms:,.1f}",
            f"{row.ms_per_1k_chars:.2f}",
            f"{row.size_ratio:,.1f}",
            f"{row.time_ratio:,.1f}",
            f"{row.cost_per_char_ratio:.2f}",
            "—" if row.exponent is None else f"{row.exponent:.2f}",
        )
    return table


def hotspot_table(scaling: eng.Scaling) -> Table:
    """The functions whose own time grew most beyond linear between the two largest sizes."""
    small, large = scaling.rows[-2].chars, scaling.rows[-1].chars
    table = Table(title=f"Hotspots: own time beyond linear growth, {small:,} → {large:,} chars")
    table.add_column("function (file:line) ← its main caller", overflow="fold")
    for column in ("small ms", "large ms", "exponent", "excess ms"):
        table.add_column(column, justify="right")
    for spot in scaling.hotspots:
        table.add_row(
            f"{spot.where} ← {spot.caller}" if spot.caller else spot.where,
            f"{spot.small_ms:,.1f}",
            f"{spot.large_ms:,.1f}",
            "—" if spot.exponent is None else f"{spot.exponent:.2f}",
            f"{spot.excess_ms:,.1f}",
        )
    return table


def work_table(work: eng.Cumulative) -> Table:
    """Model input tokens per conversation token at each checkpoint, for both strategies."""
    final = work.final
    table = Table(
        title=f"Summarization work, {work.name}: {work.turns:,} turns, "
        f"{work.conversation_tokens:,} tokens, trigger {work.trigger_chars:,} / keep "
        f"{work.keep_chars:,} chars",
        caption=f"input ÷ conversation tokens at the end: recap {final.recap_ratio:.2f} "
        f"(×{work.growth('recap'):.2f} from 50% to 100%), re-summarize-all "
        f"{final.baseline_ratio:.2f} (×{work.growth('baseline'):.2f}); "
        f"{work.recap_calls:,} vs {work.baseline_calls:,} model calls",
    )
    for column in ("at", "turns", "conv. tokens", "passes"):
        table.add_column(column, justify="right")
    for column in ("recap input", "÷ conv.", "re-sum. input", "÷ conv."):
        table.add_column(column, justify="right")
    for point in work.checkpoints:
        table.add_row(
            f"{point.share:.0%}",
            f"{point.turns:,}",
            _tokens(point.conversation_tokens),
            str(point.compactions),
            _tokens(point.recap_input_tokens),
            f"{point.recap_ratio:.2f}",
            _tokens(point.baseline_input_tokens),
            f"{point.baseline_ratio:.2f}",
        )
    return table


def _tokens(count: int) -> str:
    """A token count in at most 7 characters (``8.14M``, ``232.7k``, ``5,482``)."""
    if count >= 1_000_000:
        return f"{count / 1_000_000:.2f}M"
    return f"{count / 1_000:.1f}k" if count >= 100_000 else f"{count:,}"


# peers --------------------------------------------------------------------------------------
