"""The LSP adapter (pygls): decode, validate, route, reply. The core never imports this package."""
