"""The patch form against its reference: OpenAI Codex's own apply_patch (tests/oracle/codex/, from
npm, pinned), an independent model of the strict rule, and a randomized differential between them
and s-code (see docs/patch-format.md)."""
