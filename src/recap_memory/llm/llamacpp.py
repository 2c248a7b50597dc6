"""In-process llama.cpp (``llama-cpp-python``) on a local GGUF file.

Needs the ``local`` extra: ``pip install 'recap-memory[local]'``.

The model loads on the first request (in a worker thread, so the event loop
keeps running) and generates under a lock: one llama.cpp context serves one
request at a time. The chat template stored in the GGUF file is applied by
llama.cpp, as a server would.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recap_memory.errors import BackendError, ConfigurationError, ContextOverflowError
from recap_memory.llm.base import ChatModel, ChatTurn, Completion, ModelOptions

TEMPLATE_ALLOWANCE = 64
"""Tokens reserved for what the chat template adds (role markers, a default system prompt)."""


class LlamaCppModel(ChatModel):
    """A GGUF model run by llama.cpp inside this process."""

    def __init__(
        self,
        path: str | Path,
        *,
        context_window: int | None = None,
        threads: int | None = None,
        seed: int = 0,
    ) -> None:
        self.path = Path(path).expanduser()
        if not self.path.is_file():
            raise ConfigurationError(
                f"no GGUF model file at {self.path}; give the path of a .gguf file, "
                "e.g. llamacpp:/models/qwen2.5-3b-instruct-q4_k_m.gguf"
            )
        self.name = self.path.stem
        self.context_window = context_window or 4096
        self.threads = threads
        self.seed = seed
        self._llama: Any = None
        self._lock = threading.Lock()

    async def execute(self, messages: Sequence[ChatTurn], options: ModelOptions) -> Completion:
        """Generate in a worker thread (see the module docstring)."""
        return await asyncio.to_thread(self._generate, list(messages), options)

    async def count_tokens(self, messages: Sequence[ChatTurn]) -> int | None:
        """The contents' size in this model's tokens, plus room for its chat template."""
        return await asyncio.to_thread(self._count, list(messages))

    def _count(self, messages: list[ChatTurn]) -> int:
        with self._lock:
            llama = self._load()
            return TEMPLATE_ALLOWANCE + sum(
                len(llama.tokenize(m["content"].encode(), add_bos=False)) + 4 for m in messages
            )

    def _generate(self, messages: list[ChatTurn], options: ModelOptions) -> Completion:
        with self._lock:
            llama = self._load()
            started = time.perf_counter()
            try:
                out = llama.create_chat_completion(
                    messages=messages,
                    temperature=options.temperature,
                    max_tokens=options.max_tokens,
                    seed=self.seed,
                )
            except ValueError as exc:  # llama-cpp-python's "exceed context window"
                if "context" in str(exc).lower():
                    raise ContextOverflowError(f"{self.name}: {exc}") from exc
                raise BackendError(f"{self.name}: generation failed: {exc}") from exc
        elapsed = (time.perf_counter() - started) * 1000
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(
            choice["message"].get("content") or "",
            self.name,
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
            elapsed,
            truncated=choice.get("finish_reason") == "length",
        )

    def _load(self) -> Any:
        if self._llama is not None:
            return self._llama
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ConfigurationError(
                "the llamacpp backend needs llama-cpp-python: pip install 'recap-memory[local]'"
            ) from exc
        try:
            self._llama = Llama(
                model_path=str(self.path),
                n_ctx=self.context_window,
                n_threads=self.threads,
                seed=self.seed,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise BackendError(f"could not load {self.path} with llama.cpp: {exc}") from exc
        return self._llama
