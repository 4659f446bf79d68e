"""Hardened git inspection: binary choice, a clean environment, the config guard, the runner.

Nothing here imports pygls. The tools that expose it live in :mod:`s_code.tools.git_tools`.
"""
