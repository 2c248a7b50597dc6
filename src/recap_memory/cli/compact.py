"""``recap compact``: compact conversation files with the engine."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.progress import Progress

from recap_memory.cli import logs
from recap_memory.cli.errors import COMPACTION_FAILED, describe, fail
from recap_memory.configured import configured_compactor
from recap_memory.errors import ContextTooLargeError, RecapError
from recap_memory.inputs import expand_inputs, read_conversation
from recap_memory.messages import to_openai
from recap_memory.policy import Budget, Policy, Trigger
from recap_memory.settings import LLMSettings, SummarizationSettings, load_settings
from recap_memory.summarizers import STRATEGIES

_Int = Annotated[int | None, typer.Option(show_default=False)]
OPTIONS = {"url": "--llm-url", "timeout": "--llm-timeout"}
_DEFAULTS = {name: field.default for name, field in LLMSettings.model_fields.items()}
"""The options whose names differ from the settings they set."""


def compact(
    inputs: Annotated[
        list[str],
        typer.Argument(help="Conversation files (JSON, JSONL) or directories; - for stdin"),
    ],
    out: Annotated[
        str | None,
        typer.Option("-o", "--out", help="Output file (one input) or directory (several)"),
    ] = None,
    strategy: Annotated[
        str | None,
        typer.Option(
            help=f"One of: {', '.join(STRATEGIES)} (default: llm when a model is set, "
            "else extractive)",
            show_default=False,
        ),
    ] = None,
    llm: Annotated[
        str | None,
        typer.Option(
            help="Model spec: openai:MODEL, ollama:MODEL, llamacpp:PATH.gguf, "
            "langchain:PROVIDER:MODEL (env RECAP_LLM, UTILITY_MODEL)",
            show_default=False,
        ),
    ] = None,
    llm_url: Annotated[
        str | None,
        typer.Option(
            help="Base URL of the model server (env RECAP_LLM_URL, INFERENCE_SERVICE_URL, "
            "OLLAMA_BASE_URL, OPENAI_BASE_URL)",
            show_default=False,
        ),
    ] = None,
    temperature: Annotated[
        float | None, typer.Option(help=f"Default {_DEFAULTS['temperature']}")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option(help=f"Summary tokens per call; {_DEFAULTS['max_tokens']}")
    ] = None,
    llm_timeout: Annotated[
        float | None, typer.Option(help=f"Seconds per request; {_DEFAULTS['timeout']:g}")
    ] = None,
    context_window: Annotated[
        int | None, typer.Option(help="The model's window in tokens (known per backend)")
    ] = None,
    fallback: Annotated[
        str | None,
        typer.Option(help="When the model fails: extractive (default) or none (leave unchanged)"),
    ] = None,
    threshold_chars: _Int = None,
    threshold_tokens: _Int = None,
    keep_chars: _Int = None,
    keep_tokens: _Int = None,
    keep_messages: _Int = None,
    summary_max_chars: _Int = None,
    max_context_chars: Annotated[
        int | None,
        typer.Option(help="Hard cap on the context, in chars (env RECAP_MAX_CHARS)"),
    ] = None,
    max_context_tokens: Annotated[
        int | None,
        typer.Option(help="Hard cap on the context, in tokens (env RECAP_MAX_TOKENS)"),
    ] = None,
    report: Annotated[
        str | None, typer.Option(help="Write the compaction report(s) as JSON here (- for stdout)")
    ] = None,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Log each pass")] = False,
) -> None:
    """Fold the old part of each conversation into a summary; keep recent turns verbatim.

    Defaults come from the environment (SUMMARIZATION_THRESHOLD_CHARS, _KEEP_CHARS,
    RECAP_STRATEGY, RECAP_LLM, …), else Design A's: compact past 60,000 characters,
    keep 20,000. When the model fails, the extractive summarizer compacts instead (a
    warning on stderr says why); with --fallback none nothing is written and the
    exit code is 3.
    """
    logs.configure(verbose)
    try:
        policy = _policy(
            threshold_chars, threshold_tokens, keep_chars, keep_tokens, keep_messages,
            summary_max_chars, max_context_chars, max_context_tokens,
        )  # fmt: skip
        given: dict[str, Any] = {
            "llm": llm, "url": llm_url, "temperature": temperature, "max_tokens": max_tokens,
            "timeout": llm_timeout, "context_window": context_window, "fallback": fallback,
        }  # fmt: skip
        settings = load_settings(
            LLMSettings, {k: v for k, v in given.items() if v is not None}, options=OPTIONS
        )
        strategy = strategy or load_settings(SummarizationSettings).strategy
        compactor = configured_compactor(policy, settings, strategy=strategy)
        files = expand_inputs(inputs)
    except (ValidationError, RecapError) as exc:
        fail(describe(exc))
    if len(files) > 1 and out is None:
        fail("several inputs need -o DIR, the directory to write each compacted file to")
    try:
        conversations = [(f, read_conversation(f)) for f in files]
    except RecapError as exc:
        fail(describe(exc))

    reports: list[dict[str, Any]] = []
    outputs: list[tuple[str | None, str]] = []
    with Progress(transient=True, disable=len(files) < 2) as progress:
        task = progress.add_task("compacting", total=len(files))
        for name, messages in conversations:
            try:
                result = compactor.compact_sync(messages, request_id=name)
            except ContextTooLargeError as exc:
                fail(f"{name}: {exc}; nothing was written", code=COMPACTION_FAILED)
            if result.report.path == "rejected":
                fail(
                    f"{name}: {result.report.reason}; nothing was written (the model failed "
                    "and --fallback is none: retry, or use --fallback extractive)",
                    code=COMPACTION_FAILED,
                )
            text = json.dumps([to_openai(m) for m in result.messages], ensure_ascii=False, indent=2)
            outputs.append((_target(name, out, len(files)), text))
            reports.append({"file": name, **result.report.as_dict()})
            progress.advance(task)

    for target, text in outputs:
        _write(target, text + "\n")
    if report is not None:
        payload = reports[0] if len(reports) == 1 else reports
        _write(None if report == "-" else report, json.dumps(payload, indent=2) + "\n")


def _policy(
    threshold_chars: int | None,
    threshold_tokens: int | None,
    keep_chars: int | None,
    keep_tokens: int | None,
    keep_messages: int | None,
    summary_max_chars: int | None,
    max_chars: int | None = None,
    max_tokens: int | None = None,
) -> Policy:
    """The policy of the settings (``SUMMARIZATION_*``, ``RECAP_*``, Design A's defaults),
    with what the options say on top."""
    if threshold_chars is not None and threshold_tokens is not None:
        fail("give --threshold-chars or --threshold-tokens, not both")
    keeps = [k for k in (keep_chars, keep_tokens, keep_messages) if k is not None]
    if len(keeps) > 1:
        fail("give one of --keep-chars, --keep-tokens, --keep-messages")
    for flag, value in (
        ("--threshold-chars", threshold_chars), ("--threshold-tokens", threshold_tokens),
        ("--keep-chars", keep_chars), ("--keep-tokens", keep_tokens),
        ("--keep-messages", keep_messages), ("--summary-max-chars", summary_max_chars),
        ("--max-context-chars", max_chars), ("--max-context-tokens", max_tokens),
    ):  # fmt: skip
        if value is not None and value < (1 if "threshold" in flag or "max" in flag else 0):
            fail(f"{flag} must be a positive number, got {value}")
    configured = load_settings(SummarizationSettings).policy()
    fields: dict[str, Any] = {k: getattr(configured, k) for k in configured.model_fields_set}
    if threshold_tokens is not None:
        fields["trigger"] = Trigger(tokens=threshold_tokens)
    elif threshold_chars is not None:
        fields["trigger"] = Trigger(chars=threshold_chars)
    if keep_tokens is not None:
        fields["keep"] = Budget(tokens=keep_tokens)
    elif keep_messages is not None:
        fields["keep"] = Budget(messages=keep_messages)
    elif keep_chars is not None:
        fields["keep"] = Budget(chars=keep_chars)
    if summary_max_chars:
        fields["summary_max"] = Budget(chars=summary_max_chars)
    if max_chars is not None and max_tokens is not None:
        fail("give --max-context-chars or --max-context-tokens, not both")
    if max_chars is not None or max_tokens is not None:
        fields["max"] = Budget(chars=max_chars, tokens=max_tokens)
    return Policy(**fields)


def _target(name: str, out: str | None, count: int) -> str | None:
    if out is None or out == "-":
        return None
    if count == 1 and not Path(out).is_dir():
        return out
    stem = "stdin" if name == "-" else Path(name).stem
    return str(Path(out) / f"{stem}.json")


def _write(target: str | None, text: str) -> None:
    """Write ``text`` to stdout or to ``target`` whole: a file appears complete or not at all
    (written aside, then renamed into place); a device or pipe is written through."""
    data = text.encode("utf-8")
    if target is None:
        sys.stdout.write(text)
        return
    path = Path(target)
    if path.exists() and not path.is_file():  # /dev/null, a pipe: write through, never replace
        with path.open("wb") as stream:
            stream.write(data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)
