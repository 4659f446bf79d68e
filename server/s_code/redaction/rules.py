"""The token rules: each a name, the literal anchors that let it run, its pattern and its kind.

A rule is a *format* rule when what it matches is the secret itself, in the format its issuer gives
it (``ghp_…``, ``AKIA…``, a JWT, a PEM block): it can be hidden wherever it appears. A *context*
rule hides whatever follows a name (``DB_PASSWORD=…``, ``Authorization: …``, ``user:pass@``):
right for output, where hiding is the point, and never used for a card, where what is hidden
could be anything, shell syntax included (:meth:`~s_code.redaction.Redactor.redact_shown`).

No rule but a private-key block (PEM, PuTTY) matches across a newline, and none needs what
precedes a cut at whitespace or a character outside tokens: the stream redactor
(:mod:`.stream`) relies on both, and on every anchor being made of token characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from s_code.redaction.plain import Span

MARK = "[REDACTED]"


@dataclass(frozen=True)
class Rule:
    name: str
    anchors: tuple[str, ...]
    """A rule runs only on text holding one of these (a plain substring test; when any is in
    lower case, all are tested on the lower-cased text): ordinary build output skips almost all."""
    pattern: re.Pattern[str]
    """Groups named "keep" and "after" are kept around the mark."""
    own_format: bool
    folded: bool
    line_start: bool = False
    """The pattern begins with the newline before a line (a literal the engine finds fast, where
    ``^`` is tried at every position); the text's first line is tried with one put before it."""

    def found(self, text: str) -> list[tuple[Span, Span]]:
        """Each match in ``text``: all of it, and the part the mark replaces."""
        out = [(m.span(), hidden_span(m)) for m in self.pattern.finditer(text)]
        if self.line_start:
            end = text.find("\n")
            m = self.pattern.match("\n" + (text if end < 0 else text[:end]))
            if m is not None:
                (start, stop), (hide_start, hide_stop) = m.span(), hidden_span(m)
                out.append(((max(0, start - 1), stop - 1), (hide_start - 1, hide_stop - 1)))
        return out


def _format(name: str, anchors: tuple[str, ...], pattern: str) -> Rule:
    return Rule(name, anchors, re.compile(pattern), True, any(a.islower() for a in anchors))


def _context(name: str, anchors: tuple[str, ...], pattern: str, line_start: bool = False) -> Rule:
    folded = any(a.islower() for a in anchors)
    return Rule(name, anchors, re.compile(pattern), False, folded, line_start)


# A configuration key that names a secret: its last word (``db_password``, ``clientSecret``,
# ``access_token``, ``api-key``; not ``tokenizer``, ``token_type``, ``secretName``, ``key``).
_SECRET_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "credential",
    "credentials",
    *(
        f"{w}{sep}key"
        for w in ("api", "private", "secret", "access", "auth", "client", "signing", "master")
        for sep in ("", "_", "-")
    ),
)


def _ends_with(words: tuple[str, ...]) -> str:
    """A test at the end of a word that it ends with one of ``words`` (any case): lookbehinds,
    one per length, after a cheap one on the last two letters that most words fail."""
    by_length: dict[int, list[str]] = {}
    for w in words:
        by_length.setdefault(len(w), []).append(w)
    gate = "|".join(sorted({w[-2:] for w in words}))
    full = "|".join(f"(?<={'|'.join(group)})" for group in by_length.values())
    return f"(?i:(?<={gate})(?:{full}))"


# A word then a secret's name at its end, matched possessively: no backtracking into the word.
_KEY = r"[\w.-]++" + _ends_with(_SECRET_WORDS)
# What is not a secret: a reference (``${DB_PASSWORD}``, ``${{ secrets.X }}``, ``{{ .Values.x }}``,
# ``$VAR``), a placeholder (``<password>``, ``****``), or a type in code (``password: str = ...``,
# ``"password": "string"`` in an API schema). Empty values are never matched.
_REF = r"(?:\$\{\{[^}\n]*\}\}|\$\{[^}\n]*\}|\{\{[^}\n]*\}\}|\$[A-Za-z_]\w*|<[^>\n]*>|\*+)"
_TYPE = r"(?:str|string|String|bytes|int|bool|float|SecretStr|Optional|Option|None|Any)\b(?!-)"
_CONFIG_ANCHORS = ("passw", "passphrase", "secret", "token", "key", "credential")


RULES: tuple[Rule, ...] = (
    _format(
        "pem",
        ("-----BEGIN",),
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,20000}?"
        r"-----END[A-Z0-9 ]{0,40}-----",
    ),
    _format(
        "putty",
        ("PuTTY-User-Key-File",),
        r"PuTTY-User-Key-File-\d: [\s\S]{0,20000}?Private-MAC: [0-9a-f]+",
    ),
    _format(
        "aws_key_id",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Z0-9])",
    ),
    _context(
        "aws_secret",
        ("secret",),
        r"(?P<keep>(?i:(?:aws_?)?secret_?access_?key)[\"']?[ \t]*[=:][ \t]*[\"']?)"
        r"[A-Za-z0-9/+=]{40}",
    ),
    _format(
        "github",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})",
    ),
    _format("gitlab", ("glpat-",), r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    _format("gitlab_runner", ("glrt-",), r"\bglrt-[A-Za-z0-9_\-]{20,}"),
    _format("slack", ("xox",), r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"),
    _format("huggingface", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}"),
    _format("sendgrid", ("SG.",), r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    _format("vault", ("hvs.", "hvb.", "hvr."), r"\bhv[sbr]\.[A-Za-z0-9_\-]{20,}"),
    _format("stripe_webhook", ("whsec_",), r"\bwhsec_[A-Za-z0-9]{20,}"),
    _context(
        "azure_key",
        ("AccountKey=", "SharedAccessKey="),
        r"(?P<keep>(?:Account|SharedAccess)Key=)[A-Za-z0-9+/=]{20,}",
    ),
    _context("npmrc_auth", ("_auth",), r"(?P<keep>_auth(?:Token)?[ \t]*=[ \t]*[\"']?)[^\s\"']{4,}"),
    _context(
        "curl_user",
        ("-u",),  # also in "--user"
        r"(?P<keep>(?:(?<!\S)-u|--user)[ \t=]+[\"']?[^\s:\"']+:)[^\s\"']{3,}",
    ),
    _format(
        "slack_webhook",
        ("hooks.slack.com",),
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}",
    ),
    _format("anthropic", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    _format("openai", ("sk-",), r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    _format("stripe", ("_live_", "_test_"), r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _format("npm", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
    _format("pypi", ("pypi-",), r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    _format("gcp_api_key", ("AIza",), r"\bAIza[0-9A-Za-z_\-]{35}"),
    _format("gcp_oauth", ("ya29.",), r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    _format("jwt", ("eyJ",), r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    _context(
        "authorization",  # headers, also as JSON or a dict: "Authorization": "Bearer ..."
        ("authorization", "x-auth-token", "cookie", "api-key"),  # "api-key": x-api-key too
        r"(?P<keep>(?i:(?:proxy-)?authorization|x-api-key|x-auth-token|set-cookie|cookie|api-key)"
        r"[\"']?[ \t]*:[ \t]*[\"']?(?i:(?:bearer|basic|token|digest)[ \t]+)?)[^\s\"']{4,}",
    ),
    _context(
        "secret_assignment",  # GITHUB_TOKEN=..., DB_PASSWORD=..., AWS_SECRET_KEY=...
        ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL"),
        r"(?P<keep>\b[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY"
        r"|CREDENTIALS?)[A-Z0-9_]*=)[^\s\"']{4,}",
    ),
    _context(
        "secret_flag",  # --password=..., --token=...
        ("--",),
        r"(?P<keep>--(?i:password|passwd|token|secret|api-key|apikey)=)[^\s\"']{4,}",
    ),
    _context(
        "json_secret",  # "password": "...", 'api_key': '...'
        _CONFIG_ANCHORS,
        r"(?P<keep>(?P<q>[\"'])" + _KEY + r"(?P=q)[ \t]*:[ \t]*(?P=q))"
        r"(?!(?:" + _REF + "|" + _TYPE + r")(?P=q))"
        r"(?:\\[^\n]|(?!(?P=q))[^\\\n])+(?P<after>(?P=q))",
    ),
    _context(
        "json_secret_escaped",  # JSON inside a string: \"password\": \"...\"
        _CONFIG_ANCHORS,
        r"(?P<keep>\\(?P<q>[\"'])" + _KEY + r"\\(?P=q)[ \t]*:[ \t]*\\(?P=q))"
        r"(?!(?:" + _REF + "|" + _TYPE + r")\\(?P=q))"
        r"(?:(?!\\(?P=q))[^\n])+(?P<after>\\(?P=q))",
    ),
    _context(
        "yaml_secret",  # password: ..., - api-key: "...", a trailing comment kept
        _CONFIG_ANCHORS,
        r"(?m)(?P<keep>\n[ \t]*+(?:-[ \t]+)?" + _KEY + r":[ \t]+(?P<q>[\"'])?)"
        r"(?!(?:" + _REF + r"|(?i:null|true|false|yes|no|on|off|~))(?(q)(?P=q)|[ \t]*(?:#|$))"
        r"|" + _TYPE + r"[ \t]*(?:[\[|,;=)]|$))"
        r"(?(q)(?:(?!(?P=q))[^\n])+(?P<after>(?P=q))"
        # a plain value: words up to a comment or the line's end, matched possessively (linear)
        r"|[^\s#\"'|>&*!{\[%@`]\S*+(?:[ \t]++(?!#)\S++)*+)",
        line_start=True,
    ),
    _context(
        "url_credentials",
        ("://",),
        r"(?P<keep>://)[^/\s:@\"']{1,200}:[^/\s\"']{1,200}(?P<after>@)",
    ),
)
PEM = RULES[0].pattern
PUTTY = RULES[1].pattern
ANCHORS = tuple(sorted({a for rule in RULES for a in rule.anchors}))

# What a card may hide of a format rule's match: a token's own characters, never whitespace or
# shell syntax (``$ ( ) ` ; | & < > " ' \\ * ? [ ] { } ~ # !``), so a look-alike holding a payload
# is shown. A PEM block is hidden line by line (each line's indent or diff marker shown), and only
# when its body is nothing but base64.
_TOKEN = re.compile(r"[A-Za-z0-9_\-.+/=:]+")
_PEM_BODY = re.compile(
    r"-----BEGIN[A-Z0-9 ]{0,40}-----\r?\n"
    r"(?P<body>(?:[ \t+-]?[ \t]*[A-Za-z0-9+/=]{1,100}\r?\n){1,1000})[ \t+-]*"
    r"-----END[A-Z0-9 ]{0,40}-----"
)
_PEM_LINE = re.compile(r"(?m)^[ \t+-]?[ \t]*(?P<b64>[A-Za-z0-9+/=]+)\r?$")


def shown_spans(rule: Rule, m: re.Match[str]) -> list[Span]:
    """What a card hides of a match: nothing for a context rule; a format rule's match only when
    it is made of a token's characters; a PEM block's base64 lines, each on its own."""
    if not rule.own_format:
        return []
    if _TOKEN.fullmatch(m.group()):
        return [m.span()]
    pem = _PEM_BODY.fullmatch(m.group()) if rule.pattern is PEM else None
    if pem is None:
        return []
    base = m.start() + pem.start("body")
    return [(base + x.start("b64"), base + x.end("b64")) for x in _PEM_LINE.finditer(pem["body"])]


def hidden_span(m: re.Match[str]) -> Span:
    """The part of a match the mark replaces: all of it but the groups "keep" and "after"."""
    start = m.end("keep") if m.groupdict().get("keep") is not None else m.start()
    end = m.start("after") if m.groupdict().get("after") is not None else m.end()
    return start, end
