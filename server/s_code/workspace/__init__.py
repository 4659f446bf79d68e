"""The workspace: the only way the core touches files (WorkspaceRoot), discovery and search."""
