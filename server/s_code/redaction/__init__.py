"""Redaction of secrets in everything shown or persisted: command output, cards, audit rows.

Two sources: exact values the sidecar knows (and their base64, URL-quoted and JSON-escaped forms),
and a curated set of rules (:mod:`.rules`): *format* rules (a token as its issuer writes it) and
*context* rules (whatever follows a secret's name). Output (:meth:`.Redactor.redact`, and
:class:`.StreamRedactor` chunk by chunk and through pauses, holding back what could still be part
of a secret, never less redacted than the whole text) uses both, seen through terminal colour
codes (:mod:`.plain`); a card
(:meth:`.Redactor.redact_shown`) hides only known values and format tokens, never shell syntax.
"""

from __future__ import annotations

from s_code.redaction.redactor import Redactor, secret_env_values, variants
from s_code.redaction.rules import MARK
from s_code.redaction.stream import CARRY, StreamRedactor

__all__ = ["CARRY", "MARK", "Redactor", "StreamRedactor", "secret_env_values", "variants"]
