"""Credential handles: ``${secret:keyring:<service>/<account>}`` and ``${secret:env:<NAME>}``.

Host-process configuration holds handles, never values. :mod:`.handles` parses and finds them
(names for previews and trust hashes) in an entry's env and refuses them
anywhere else (never in an argv), :mod:`.resolve` substitutes their values at spawn time
only, :mod:`.keystore` reads and writes the system keyring and refuses a plaintext or failing
backend, :mod:`.index` keeps the names ``s-code secret list`` shows. Nothing here imports
``tools/``, ``lsp/`` or a face.
"""

from __future__ import annotations

from s_code.credentials.handles import (
    Handle,
    entry_handles,
    handle_names,
    refuse_handles,
    refuse_in_args,
    refuse_in_command,
)
from s_code.credentials.resolve import Resolved, literal_secrets, require_handles_only, resolve

__all__ = [
    "Handle",
    "Resolved",
    "entry_handles",
    "handle_names",
    "literal_secrets",
    "refuse_handles",
    "refuse_in_args",
    "refuse_in_command",
    "require_handles_only",
    "resolve",
]
