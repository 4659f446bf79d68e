"""The tool registry: one definition per tool, and the tools themselves."""
