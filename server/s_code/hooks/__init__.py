"""Hooks: programs the user configures to run around every tool call (``hooks.json``), trusted by
hash like every host process, fired from the one tool dispatch and failing closed."""
