"""Host processes: what the user installs to run with their own authority (MCP servers now,
hooks and terminals next): configuration, trust bound to a hash, previews, spawn, reaping."""
