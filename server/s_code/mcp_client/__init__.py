"""MCP stdio servers: a client on the official ``mcp`` SDK, and their tools as s-code tools."""
