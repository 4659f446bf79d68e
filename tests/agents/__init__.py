"""Real agent CLIs (Claude Code, Codex CLI) as MCP clients, offline: a scripted model server
(scripted_model.py) stands in for the model API, harness.py runs the CLIs pinned in package.json."""
