"""The limits of one code-mode run. Each breach stops the run: ``timeout`` for the wall time,
``limit_exceeded`` (with ``limit``) for the rest; the output is cut to its head and tail."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = 120_000
MAX_CODE_CHARS = 100_000


@dataclass(frozen=True)
class Limits:
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    """Wall time of the whole run, child calls included (the sidecar kills the worker)."""
    memory_bytes: int = 64 * 1024 * 1024
    """The JavaScript heap (QuickJS's allocator limit)."""
    stack_bytes: int = 1024 * 1024
    """The JavaScript stack: deep recursion stops here."""
    max_calls: int = 200
    """Child calls per run."""
    max_result_chars: int = 1_000_000
    """The JSON text of one child call's result passed into JavaScript."""
    max_args_chars: int = 200_000
    """The JSON text of one child call's arguments."""
    max_output_chars: int = 32_000
    """The returned value's text, and the console.log text, each: head and tail kept."""
    max_depth: int = 64
    """How deeply a child call's arguments, or the returned value, may nest."""

    @property
    def cpu_s(self) -> int:
        """The worker's own CPU-time limit: a backstop for when the sidecar is gone."""
        return self.timeout_ms // 1000 + 2

    @property
    def line_bytes(self) -> int:
        """The longest message (bytes) the sidecar reads from a worker: the arguments in UTF-8,
        or the value and the logs with every character escaped (``\\u0001``)."""
        return max(3 * self.max_args_chars, 14 * self.max_output_chars) + 65_536
