"""The pure helpers of the code-mode worker: head-and-tail text, the user's line in a stack."""

from __future__ import annotations

from s_code.codemode.limits import Limits
from s_code.codemode.worker import Bounded, user_line


def test_bounded_keeps_head_and_tail() -> None:
    kept = Bounded(20)
    for i in range(100):
        kept.add(f"line {i}\n")
    text = kept.text()
    assert text.startswith("line 0\nlin")  # 10 characters of head, 10 of tail
    assert text.endswith("line 99\n")
    assert kept.omitted == sum(len(f"line {i}\n") for i in range(100)) - 20
    assert f"[... {kept.omitted} characters omitted ...]" in text


def test_bounded_under_its_limit_is_whole() -> None:
    kept = Bounded(100)
    kept.add("a\n")
    kept.add("b\n")
    assert kept.text() == "a\nb\n" and kept.omitted == 0


def test_user_line_skips_the_bootstrap() -> None:
    stack = (
        "    at __sc_tool (<input>:23)\n    at __sc_bound (<input>)\n"
        "    at <anonymous> (<input>:4)\n    at __sc_run (<input>:61)\n"
    )
    assert user_line(stack) == 4
    assert user_line("SyntaxError: expecting ';'\n    at <input>:1\n") == 1
    assert user_line("") is None


def test_the_worker_never_reads_more_than_it_was_given() -> None:
    limits = Limits()
    assert limits.line_bytes > 3 * limits.max_args_chars
    assert limits.cpu_s >= limits.timeout_ms // 1000 + 1
