"""The typed session every face builds and every domain receives (no LSP, no tool layer)."""
