"""The MCP face: s-code's tools served to the agents people run (Claude Code, Codex, VS Code's
agent mode...) over MCP, through the one dispatch; attached to the editor's session when an
editor serves the workspace, so the editor stays the approver."""
