"""Redaction of secrets in everything shown or persisted: command output, cards, audit rows.

Two sources: exact values the sidecar knows (and their base64, URL-quoted and JSON-escaped forms),
and a curated set of token rules (:mod:`.rules`). :class:`.Redactor` redacts a text;
:class:`.StreamRedactor` redacts a stream chunk by chunk, holding back a tail that could be the
start of a secret, so a token split across chunks is still caught.
"""

from __future__ import annotations

from s_code.redaction.redactor import Redactor, secret_env_values, variants
from s_code.redaction.rules import MARK
from s_code.redaction.stream import CARRY, StreamRedactor

__all__ = ["CARRY", "MARK", "Redactor", "StreamRedactor", "secret_env_values", "variants"]
