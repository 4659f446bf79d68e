"""Redaction of secrets in everything shown or persisted: command output, cards, audit rows.

Two sources: exact values the sidecar knows (and their base64, URL-quoted and JSON-escaped forms),
and a curated set of token rules. ``StreamRedactor`` redacts a stream chunk by chunk, holding back a
tail that could be the start of a secret, so a token split across chunks is still caught.
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

MARK = "[REDACTED]"

# (name, literal anchors, pattern). A rule runs only on text holding one of its anchors (a plain
# substring test; anchors in lower case are tested on the lower-cased text), which lets ordinary
# build output skip almost every rule. Groups named "keep" and "after" are kept around the mark.
_RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "pem",
        ("-----BEGIN",),
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,20000}?"
        r"-----END[A-Z0-9 ]{0,40}-----",
    ),
    (
        "putty",
        ("PuTTY-User-Key-File",),
        r"PuTTY-User-Key-File-\d: [\s\S]{0,20000}?Private-MAC: [0-9a-f]+",
    ),
    (
        "aws_key_id",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Z0-9])",
    ),
    (
        "aws_secret",
        ("secret",),
        r"(?P<keep>(?i:(?:aws_?)?secret_?access_?key)[\"']?\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{40}",
    ),
    (
        "github",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})",
    ),
    ("gitlab", ("glpat-",), r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("gitlab_runner", ("glrt-",), r"\bglrt-[A-Za-z0-9_\-]{20,}"),
    ("slack", ("xox",), r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"),
    ("huggingface", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}"),
    ("sendgrid", ("SG.",), r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    ("vault", ("hvs.", "hvb.", "hvr."), r"\bhv[sbr]\.[A-Za-z0-9_\-]{20,}"),
    ("stripe_webhook", ("whsec_",), r"\bwhsec_[A-Za-z0-9]{20,}"),
    (
        "azure_key",
        ("AccountKey=", "SharedAccessKey="),
        r"(?P<keep>(?:Account|SharedAccess)Key=)[A-Za-z0-9+/=]{20,}",
    ),
    ("npmrc_auth", ("_auth",), r"(?P<keep>_auth(?:Token)?\s*=\s*[\"']?)[^\s\"']{4,}"),
    (
        "curl_user",
        ("-u", "--user"),
        r"(?P<keep>(?:\s-u|--user)[\s=]+[\"']?[^\s:\"']+:)[^\s\"']{3,}",
    ),
    (
        "slack_webhook",
        ("hooks.slack.com",),
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}",
    ),
    ("anthropic", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    ("openai", ("sk-",), r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("stripe", ("_live_", "_test_"), r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("npm", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi", ("pypi-",), r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    ("gcp_api_key", ("AIza",), r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("gcp_oauth", ("ya29.",), r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    ("jwt", ("eyJ",), r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    (
        "authorization",  # headers, also as JSON or a dict: "Authorization": "Bearer ..."
        ("authorization", "x-api-key", "x-auth-token", "cookie", "api-key"),
        r"(?P<keep>(?i:(?:proxy-)?authorization|x-api-key|x-auth-token|set-cookie|cookie|api-key)"
        r"[\"']?\s*:\s*[\"']?(?i:(?:bearer|basic|token|digest)\s+)?)[^\s\"']{4,}",
    ),
    (
        "secret_assignment",  # GITHUB_TOKEN=..., DB_PASSWORD=..., AWS_SECRET_KEY=...
        ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL"),
        r"(?P<keep>\b[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY"
        r"|CREDENTIALS?)[A-Z0-9_]*=)[^\s\"']{4,}",
    ),
    (
        "secret_flag",  # --password=..., --token=...
        ("--",),
        r"(?P<keep>--(?i:password|passwd|token|secret|api-key|apikey)=)[^\s\"']{4,}",
    ),
    ("url_credentials", ("://",), r"(?P<keep>://)[^/\s:@\"']{1,200}:[^/\s\"']{1,200}(?P<after>@)"),
)
_COMPILED = tuple(
    (anchors, any(a.islower() for a in anchors), re.compile(p)) for _, anchors, p in _RULES
)
_PEM = _COMPILED[0][2]
# How far back a secret may start before a chunk boundary and still be caught: the longest
# non-PEM token, plus slack. A PEM block is held until its END line (bounded by the rule).
CARRY = 512
_MAX_TOKEN = 16384
_SECRET_NAME = re.compile(r"(?i)(token|secret|password|passwd|api_?key|private_?key|credential)")


def variants(value: str) -> set[str]:
    """A known value and the encodings it commonly travels in: URL-quoted, JSON-escaped,
    shell-quoted, hex, and base64 at each of the three alignments it can have inside a longer
    encoded string (the characters that do not depend on its neighbours)."""
    raw = value.encode()
    out = {value, quote(value, safe=""), json.dumps(value)[1:-1], shlex.quote(value), raw.hex()}
    for enc in (base64.b64encode, base64.urlsafe_b64encode):
        out.add(enc(raw).decode().rstrip("="))
        for offset in (1, 2):
            body = enc(b"\0" * offset + raw).decode().rstrip("=")
            stable_end = ((offset + len(raw)) // 3) * 4  # the last quantum depends on what follows
            middle = body[4:stable_end]
            if len(middle) >= 8:
                out.add(middle)
    return {v for v in out if len(v) >= 6}


def secret_env_values(environ: dict[str, str] | None = None) -> list[str]:
    """Values of the sidecar's variables whose names say they are secrets."""
    env = os.environ if environ is None else environ
    return [v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 8]


class Redactor:
    def __init__(self, known: Iterable[str] = ()) -> None:
        exact = sorted({v for value in known for v in variants(value)}, key=len, reverse=True)
        self._exact = re.compile("|".join(map(re.escape, exact))) if exact else None
        self._exact_values = tuple(exact)
        self.longest_known = max((len(v) for v in exact), default=0)

    def _active(self, text: str) -> list[re.Pattern[str]]:
        lower = text.lower()
        return [
            rx
            for anchors, folded, rx in _COMPILED
            if any(a in (lower if folded else text) for a in anchors)
        ]

    def _has_exact(self, text: str) -> bool:
        # substring tests are much faster than the alternation when nothing matches (the usual case)
        return any(v in text for v in self._exact_values)

    def spans(
        self, text: str, active: list[re.Pattern[str]] | None = None
    ) -> list[tuple[int, int]]:
        """Where secrets are in ``text`` (``active``: the rules to try, if already known)."""
        found: list[tuple[int, int]] = []
        if self._exact is not None and self._has_exact(text):
            found += [m.span() for m in self._exact.finditer(text)]
        for rx in self._active(text) if active is None else active:
            found += [m.span() for m in rx.finditer(text)]
        return found

    def redact_all(self, texts: list[str]) -> list[str]:
        """``redact`` of each text, in one pass over them all (joined by NULs, which no rule
        matches and no secret value holds)."""
        if any("\0" in t for t in texts):
            return [self.redact(t) for t in texts]
        joined = self.redact("\0".join(texts)).split("\0")
        return joined if len(joined) == len(texts) else [self.redact(t) for t in texts]

    def redact(self, text: str, active: list[re.Pattern[str]] | None = None) -> str:
        if self._exact is not None and self._has_exact(text):
            text = self._exact.sub(MARK, text)
        for rx in self._active(text) if active is None else active:
            text = rx.sub(_replace, text)
        return text

    def redact_json(self, value: Any) -> Any:
        """Every string (and key) of JSON data redacted: a host process's result or output."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, list):
            return [self.redact_json(v) for v in value]
        if isinstance(value, dict):
            return {self.redact(str(k)): self.redact_json(v) for k, v in value.items()}
        return value


_ANCHORS = tuple(sorted({a for _, anchors, _ in _RULES for a in anchors}))


def _last_anchor(text: str, start: int) -> int:
    """The last position at or after ``start`` where a rule's anchor begins, or -1."""
    lower = text[start:].lower()
    found = [start + (lower.rfind(a) if a.islower() else text[start:].rfind(a)) for a in _ANCHORS]
    return max((f for f in found if f >= start), default=-1)


def _replace(m: re.Match[str]) -> str:
    groups = m.groupdict()
    return f"{groups.get('keep') or ''}{MARK}{groups.get('after') or ''}"


class StreamRedactor:
    """Redacts a stream: ``feed`` returns what is safe to emit now, ``flush`` the rest at the end.

    What follows the last newline, up to ``carry`` characters, is held back (a secret may start
    there and continue in the next chunk); the cut never falls inside a secret found in what is
    buffered, and an unfinished PEM block is held until its END line.
    """

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.carry = max(CARRY, redactor.longest_known)
        self._pending = ""

    def feed(self, chunk: str) -> str:
        buf = self._pending + chunk
        if len(buf) <= self.carry and "\n" not in chunk:
            self._pending = buf
            return ""
        # Safe cut points: ``carry`` characters back (a secret starting earlier has ended), or
        # after the last newline (no rule but PEM spans lines), whichever lets more out now.
        cut = max(len(buf) - self.carry, buf.rfind("\n") + 1)
        # ... but never inside the run of non-space characters at the end: a token (a JWT can be
        # kilobytes long) may be open there; bounded so a stream without spaces still flows
        run_start = max(buf.rfind(" "), buf.rfind("\n"), buf.rfind("\t")) + 1
        if len(buf) - run_start <= _MAX_TOKEN:
            cut = min(cut, run_start)
        else:  # a long run: hold from the last place a token could start in it
            anchor = _last_anchor(buf, max(run_start, len(buf) - _MAX_TOKEN))
            if anchor >= 0:
                cut = min(cut, anchor)
        active = self.redactor._active(buf)  # once per feed: the anchors scan is the cost
        tail = buf[max(0, cut - 20000) :]
        offset = len(buf) - len(tail)
        for start, end in self.redactor.spans(tail, active):
            if offset + start < cut < offset + end:
                cut = offset + start
        begin = buf.rfind("-----BEGIN", max(0, cut - 20000), cut)
        if begin >= 0 and _PEM.match(buf, begin) is None and len(buf) - begin < 20000:
            cut = begin  # an unfinished block: hold it until its END line arrives
        head, self._pending = buf[:cut], buf[cut:]
        return self.redactor.redact(head, active)

    def flush(self) -> str:
        rest, self._pending = self._pending, ""
        return self.redactor.redact(rest)
