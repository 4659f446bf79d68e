"""The redactor: exact values the sidecar knows (and their encodings) and the token rules.

Three modes. :meth:`Redactor.redact` is for output (a command's streams, a host process's result):
every rule, context rules too, seen through terminal colour codes (:mod:`.plain`).
:meth:`Redactor.redact_shown` is for a card: only known values and secret-format tokens, never a
span holding whitespace or shell syntax. :meth:`Redactor.redact_known` (and
:meth:`Redactor.redact_known_json`) is for what the sidecar read itself (a file, a search, a diff):
only the known values, so a test fixture shaped like a token stays readable and editable; free
when nothing is known.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from s_code.redaction.cuts import cut_end, cut_start
from s_code.redaction.plain import Plain, Span, kept
from s_code.redaction.rules import MARK, RULES, Rule, shown_spans

_SECRET_NAME = re.compile(r"(?i)(token|secret|password|passwd|api_?key|private_?key|credential)")


def variants(value: str) -> set[str]:
    """A known value and the encodings it commonly travels in: URL-quoted, JSON-escaped,
    shell-quoted, hex (either case), UTF-16 as UTF-8 output shows it (a NUL beside each ASCII
    character, either byte order), and base64 at each of the three alignments it can have inside
    a longer encoded string (the characters that do not depend on its neighbours). A value of
    several lines (a private key) also by each of its lines of 8 characters or more, armour lines
    (``-----BEGIN ...``) aside: numbered lines, a search's matches and a diff show it line by
    line, each behind a prefix."""
    raw = value.encode()
    out = {value, quote(value, safe=""), json.dumps(value)[1:-1], shlex.quote(value), raw.hex()}
    out |= {raw.hex().upper(), "\0".join(value)}
    for enc in (base64.b64encode, base64.urlsafe_b64encode):
        out.add(enc(raw).decode().rstrip("="))
        for offset in (1, 2):
            body = enc(b"\0" * offset + raw).decode().rstrip("=")
            stable_end = ((offset + len(raw)) // 3) * 4  # the last quantum depends on what follows
            middle = body[4:stable_end]
            if len(middle) >= 8:
                out.add(middle)
    if "\n" in value:
        lines = (line.strip() for line in value.split("\n"))
        out |= {line for line in lines if len(line) >= 8 and not line.startswith("-----")}
    return {v for v in out if len(v) >= 6}


def secret_env_values(environ: dict[str, str] | None = None) -> list[str]:
    """Values of the sidecar's variables whose names say they are secrets."""
    env = os.environ if environ is None else environ
    return [v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 8]


class Redactor:
    def __init__(self, known: Iterable[str] = ()) -> None:
        self._exact_values: tuple[str, ...] = ()
        self._exact: re.Pattern[str] | None = None
        self._bytes: tuple[tuple[str, ...], tuple[bytes, ...]] = ((), ())
        self.longest_known = 0
        self.add_known(known)

    def add_known(self, known: Iterable[str]) -> None:
        """Learn more exact values (a credential resolved for a host process): from now on
        they are hidden, in every encoding, wherever they appear."""
        more = {v for value in known for v in variants(value)} - set(self._exact_values)
        if not more and self._exact is not None:
            return
        exact = sorted({*self._exact_values, *more}, key=len, reverse=True)
        self._exact = re.compile("|".join(map(re.escape, exact))) if exact else None
        self._exact_values = tuple(exact)
        self.longest_known = max((len(v) for v in exact), default=0)

    @property
    def knows_values(self) -> bool:
        """Whether any exact value is known (else :meth:`redact_known` has nothing to do)."""
        return self._exact is not None

    @property
    def known_values(self) -> tuple[str, ...]:
        """Every exact value hidden, in each encoding (longest first)."""
        return self._exact_values

    @property
    def known_bytes(self) -> tuple[bytes, ...]:
        """:attr:`known_values` in UTF-8: what output still in bytes is cut against (git's, a
        terminal's buffer; :mod:`.cuts`)."""
        values = self._exact_values
        if self._bytes[0] is not values:
            self._bytes = (values, tuple(_utf8(v) for v in values))
        return self._bytes[1]

    def cut_end(self, text: str) -> int:
        """Where ``text``, to be cut after its end, must end instead: before a trailing piece
        that starts a known value, never inside one (:func:`.cuts.cut_end`)."""
        return cut_end(text, self._exact_values) if self._exact_values else len(text)

    def cut_end_bytes(self, data: bytes) -> int:
        """:meth:`cut_end` of output still in bytes."""
        return cut_end(data, self.known_bytes) if self._exact_values else len(data)

    def cut_start(self, text: str) -> int:
        """Where ``text``, to be cut before its start, must start instead: after a leading piece
        that ends a known value, never inside one (:func:`.cuts.cut_start`)."""
        return cut_start(text, self._exact_values) if self._exact_values else 0

    def active(self, text: str) -> list[Rule]:
        """The rules whose anchors ``text`` holds: the only ones that can match in it (each
        anchor tested once, however many rules share it)."""
        lower = text.lower()
        seen: dict[tuple[str, bool], bool] = {}
        out = []
        for rule in RULES:
            for a in rule.anchors:
                hit = seen.get((a, rule.folded))
                if hit is None:
                    hit = seen[a, rule.folded] = a in (lower if rule.folded else text)
                if hit:
                    out.append(rule)
                    break
        return out

    def _has_exact(self, text: str) -> bool:
        # substring tests are much faster than the alternation when nothing matches (the usual case)
        return any(v in text for v in self._exact_values)

    def _known(self, text: str) -> list[Span]:
        """Where the known values are in ``text``."""
        if self._exact is None or not self._has_exact(text):
            return []
        return [m.span() for m in self._exact.finditer(text)]

    def holds_known(self, text: str) -> bool:
        """Whether ``text`` holds a known value (in any of its encodings)."""
        return self._exact is not None and self._has_exact(text)

    def found(self, plain: Plain) -> list[tuple[Span, Span]]:
        """Each secret in the text: where its match is (its context included) and the part the
        mark replaces, in the original text's positions."""
        text = plain.text
        out = [(span, span) for span in self._known(text)]
        for rule in self.active(text):
            out += rule.found(text)
        if plain.stripped:
            out = [(plain.back(whole), plain.back(part)) for whole, part in out]
        return out

    def redact(self, text: str) -> str:
        """Output (a command's streams, a host process's result): every rule, context rules too."""
        return hide(text, [part for _, part in self.found(Plain(text))])

    def redact_shown(self, text: str) -> str:
        """What a card shows (and so the argv a command returns and the audit log): only known
        values and tokens in a secret's own format hidden, never shell syntax. What follows a
        secret-sounding name is shown: ``X_TOKEN=$(curl …|sh)`` is what would run."""
        hidden = self._known(text)
        for rule in self.active(text):
            if rule.own_format:  # a context rule hides what follows a name: never in a card
                for m in rule.pattern.finditer(text):
                    hidden += shown_spans(rule, m)
        return hide(text, hidden)

    def redact_known(self, text: str) -> str:
        """Only the known values (and their encodings) hidden: what the sidecar read itself (a
        file, a search, a diff, a tool's description), where a token rule would hide a fixture
        the agent must be able to read and edit."""
        return hide(text, self._known(text))

    def redact_known_json(self, value: Any) -> Any:
        """Every string (and key) of JSON data with the known values hidden (``value`` itself
        when none is there: nothing is copied). One substring pass over all the strings joined
        decides whether any string needs a look; nothing known: nothing done at all."""
        if self._exact is None:
            return value
        strings: list[str] = []
        _collect(value, strings)
        if not strings or not self._has_exact("\0".join(strings)):
            return value
        done = [self.redact_known(t) for t in strings]
        return _rebuild(value, iter(done)) if done != strings else value

    def redact_json(self, value: Any) -> Any:
        """Every string (and key) of JSON data redacted: a host process's result or output.
        The strings are redacted in one pass, joined by NULs (no rule matches one, no secret
        holds one): the rules' anchors are looked for once, not once per string."""
        strings: list[str] = []
        _collect(value, strings)
        if not strings:
            return value
        if any("\0" in t for t in strings):
            done = [self.redact(t) for t in strings]
        else:
            done = self.redact("\0".join(strings)).split("\0")
            if len(done) != len(strings):
                done = [self.redact(t) for t in strings]
        if done == strings:
            return value
        return _rebuild(value, iter(done))


def _utf8(value: str) -> bytes:
    """A value's bytes as a program prints it (one read from the environment may hold
    undecodable bytes as surrogates)."""
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")


def _collect(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            _collect(v, out)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(str(k))
            _collect(v, out)


def _rebuild(value: Any, done: Any) -> Any:
    if isinstance(value, str):
        return next(done)
    if isinstance(value, list):
        return [_rebuild(v, done) for v in value]
    if isinstance(value, dict):
        out = {}
        for _, v in value.items():
            key = next(done)
            out[key] = _rebuild(v, done)
        return out
    return value


def hide(text: str, spans: list[Span]) -> str:
    """``text`` with each span (overlapping ones merged) replaced by the mark; the terminal
    control sequences inside a span are kept after it."""
    if not spans:
        return text
    out: list[str] = []
    done = 0
    for start, end in sorted(spans):
        if end <= done:
            continue
        if start >= done:
            out += [text[done:start], MARK]
        out.append(kept(text[max(start, done) : end]))
        done = end
    return "".join([*out, text[done:]])
