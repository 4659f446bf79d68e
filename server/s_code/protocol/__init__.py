"""The wire contract: method names, error kinds and the base of every request model."""
