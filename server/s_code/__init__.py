"""s-code: the tool host an editor-embedded coding agent works through."""

__version__ = "0.1.0"
