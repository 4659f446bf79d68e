"""Validation of agent-supplied paths, before any system call is made with them."""

from __future__ import annotations

from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params

MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255


def split_relative(path: str, field: str = "path") -> tuple[str, ...]:
    """Split a workspace-relative POSIX path into components; ``()`` is the root itself.

    Refused: empty, NUL, backslash, over-long (``invalid_params``); absolute or containing ``..``
    (``path_escape``). ``.`` and empty components are dropped (``a/./b`` and ``a//b`` are ``a/b``).
    """
    if path == "":
        raise invalid_params("path is empty", field)
    if "\x00" in path:
        raise invalid_params("path contains a NUL byte", field)
    if "\\" in path:
        raise invalid_params("path contains a backslash; use '/' as the separator", field)
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise invalid_params(f"path is longer than {MAX_PATH_BYTES} bytes", field)
    if path.startswith("/"):
        raise SCodeError(
            ErrorKind.PATH_ESCAPE,
            f"absolute paths are not allowed ({path!r}); use a workspace-relative path",
            path=path,
            field=field,
        )
    parts = tuple(p for p in path.split("/") if p not in ("", "."))
    for part in parts:
        if part == "..":
            raise SCodeError(
                ErrorKind.PATH_ESCAPE,
                f"'..' is not allowed in paths ({path!r})",
                path=path,
                field=field,
            )
        if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            raise invalid_params(f"a path component is longer than {MAX_NAME_BYTES} bytes", field)
    return parts


def join(parts: tuple[str, ...]) -> str:
    """The canonical relative spelling of ``parts`` (``.`` for the root)."""
    return "/".join(parts) or "."
