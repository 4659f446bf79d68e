"""The token rules: each a name, the literal anchors that let it run, and its pattern."""

from __future__ import annotations

import re

MARK = "[REDACTED]"

# (name, literal anchors, pattern). A rule runs only on text holding one of its anchors (a plain
# substring test; anchors in lower case are tested on the lower-cased text), which lets ordinary
# build output skip almost every rule. Groups named "keep" and "after" are kept around the mark.
RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
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
COMPILED = tuple(
    (anchors, any(a.islower() for a in anchors), re.compile(p)) for _, anchors, p in RULES
)
PEM = COMPILED[0][2]
ANCHORS = tuple(sorted({a for _, anchors, _ in RULES for a in anchors}))


def replace(m: re.Match[str]) -> str:
    """A match's replacement: the mark, with the groups named "keep" and "after" around it."""
    groups = m.groupdict()
    return f"{groups.get('keep') or ''}{MARK}{groups.get('after') or ''}"
