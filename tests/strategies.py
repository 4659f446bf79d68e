"""The two path-resolution strategies of WorkspaceRoot, as a fixture: each test that resolves
paths runs once under openat2 and once under the component-wise fallback, and the other
strategy raises if it is ever reached."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from s_code.workspace import openat2


def _forbidden(what: str) -> Callable[..., int]:
    def fail(*_args: object, **_kwargs: object) -> int:
        raise AssertionError(f"{what} must not be used under this strategy")

    return fail


def _kernel_has_openat2() -> bool:
    if openat2._syscall is None:
        return False
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.close(openat2._openat2(fd, ".", os.O_RDONLY, 0))
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


@pytest.fixture(params=["openat2", "fallback"])
def strategy(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Force one resolution strategy; the other one raises if it is ever reached."""
    if request.param == "openat2":
        if not _kernel_has_openat2():
            pytest.skip("this kernel has no usable openat2")
        monkeypatch.setattr(openat2, "use_openat2", True)
        monkeypatch.setattr(openat2, "_walk_open", _forbidden("the component-wise fallback"))
    else:
        monkeypatch.setattr(openat2, "use_openat2", False)
        monkeypatch.setattr(openat2, "_openat2", _forbidden("openat2"))
    return str(request.param)
