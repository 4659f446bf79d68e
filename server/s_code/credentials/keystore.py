"""The system keyring that holds ``${secret:keyring:...}`` values, and the refusal of weak ones.

Storage is the ``keyring`` package's backend (Secret Service on Linux, through D-Bus; the macOS
Keychain; the Windows Credential Locker; KWallet). The backend keyring picks (or that
``PYTHON_KEYRING_BACKEND`` or ``keyringrc.cfg`` names) is checked by class, module and priority:

- ``keyring.backends.fail`` (no backend reachable: headless Linux without D-Bus) and
  ``keyring.backends.null`` (stores nothing) are refused, always;
- a system keyring (:data:`SYSTEM_BACKENDS`, exact classes) is used;
- anything else is refused unless the user sets ``S_CODE_ALLOW_PLAINTEXT_KEYRING=1``:
  ``keyrings.alt``'s ``PlaintextKeyring`` (keyring picks it silently when it is installed and no
  system keyring answers) keeps values base64-encoded in a file, and keyring itself calls a
  priority under 1 "not recommended"; an unknown third-party backend cannot be vouched for.
- a chain of backends (keyring's ``ChainerBackend``) is replaced by its first system keyring, so a
  plaintext file beside it is neither read nor written.

Every function here may block (a D-Bus round trip, an unlock prompt of the desktop): call it from
a worker thread (``asyncio.to_thread``), never on the event loop, and bound the wait. Failures are
:class:`KeyringUnavailable` with an actionable message that never holds a secret value.
"""

from __future__ import annotations

import os
from typing import Literal

import keyring
import keyring.core
import keyring.errors
from keyring.backend import KeyringBackend
from keyring.backends import fail, null

ALLOW_ENV = "S_CODE_ALLOW_PLAINTEXT_KEYRING"
SYSTEM_BACKENDS = frozenset(
    {
        "keyring.backends.SecretService.Keyring",
        "keyring.backends.libsecret.Keyring",
        "keyring.backends.kwallet.DBusKeyring",
        "keyring.backends.kwallet.DBusKeyringKWallet4",
        "keyring.backends.macOS.Keyring",
        "keyring.backends.Windows.WinVaultKeyring",
    }
)
Verdict = Literal["system", "weak", "none"]
_CHAINER = "keyring.backends.chainer.ChainerBackend"
_START_ONE = (
    "start a system keyring (on Linux the Secret Service, e.g. gnome-keyring, reachable over "
    "D-Bus: DBUS_SESSION_BUS_ADDRESS) or use ${secret:env:NAME} handles"
)


class KeyringUnavailable(Exception):
    """No keyring s-code will use, or a keyring call that failed; the message says what to do."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason  # "no_keyring", "refused" or "error"


def backend_name(backend: KeyringBackend) -> str:
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def _priority(backend: KeyringBackend) -> float | None:
    try:
        return float(backend.priority)
    except Exception:  # a backend that is not viable raises from its priority
        return None


def allowed_weak() -> bool:
    """Whether the user opted in to a keyring s-code cannot vouch for (``ALLOW_ENV=1``)."""
    return os.environ.get(ALLOW_ENV, "").strip() == "1"


def classify(backend: KeyringBackend) -> Verdict:
    """``system`` (used), ``weak`` (used only when opted in) or ``none`` (never used)."""
    if isinstance(backend, fail.Keyring | null.Keyring):
        return "none"
    if backend_name(backend) in SYSTEM_BACKENDS:
        return "system"
    return "weak"


def _why_weak(backend: KeyringBackend) -> str:
    name = backend_name(backend)
    priority = _priority(backend)
    if "plaintext" in name.lower() or name.startswith("keyrings.alt."):
        what = "keeps values in a file, in plain text or weakly encoded"
    elif priority is not None and priority < 1:
        what = f"has priority {priority:g}, which keyring itself does not recommend"
    else:
        what = "is not a system keyring s-code knows"
    return (
        f"the keyring backend {name} {what}: s-code refuses it. To fix: {_START_ONE}; or set "
        f"{ALLOW_ENV}=1 to use this backend anyway"
    )


def _no_keyring() -> KeyringUnavailable:
    return KeyringUnavailable(
        f"no system keyring is reachable (keyring found no usable backend): {_START_ONE}",
        "no_keyring",
    )


def choose(backend: KeyringBackend, allow_weak: bool) -> KeyringBackend:
    """The backend to use given keyring's choice, or :class:`KeyringUnavailable`."""
    if backend_name(backend) == _CHAINER:
        chain: list[KeyringBackend] = list(getattr(type(backend), "backends", []))
        for member in chain:
            if classify(member) == "system":
                return member
        if not chain:
            raise _no_keyring()
        backend = chain[0]
    verdict = classify(backend)
    if verdict == "system" or (verdict == "weak" and allow_weak):
        return backend
    if isinstance(backend, fail.Keyring):
        raise _no_keyring()
    if verdict == "none":
        raise KeyringUnavailable(
            f"the keyring backend {backend_name(backend)} stores nothing (chosen by "
            f"PYTHON_KEYRING_BACKEND or keyringrc.cfg): {_START_ONE}",
            "no_keyring",
        )
    raise KeyringUnavailable(_why_weak(backend), "refused")


def current() -> KeyringBackend:
    """The checked backend of this process (blocking: run in a worker thread)."""
    try:
        found = keyring.get_keyring()
        if isinstance(found, fail.Keyring):  # nothing answered when first asked: look again
            keyring.core.init_backend()
            found = keyring.get_keyring()
    except Exception as exc:  # a named backend that cannot load
        raise KeyringUnavailable(
            f"the keyring backend could not be loaded ({type(exc).__name__}: {exc}): {_START_ONE}",
            "no_keyring",
        ) from exc
    return choose(found, allowed_weak())


def _failed(action: str, exc: Exception, value: str | None = None) -> KeyringUnavailable:
    text = str(exc)
    if value:
        text = text.replace(value, "[REDACTED]")
    return KeyringUnavailable(
        f"the keyring could not {action} ({type(exc).__name__}: {text})", "error"
    )


def get_secret(service: str, account: str) -> str | None:
    """The stored value, or None when there is none (blocking: run in a worker thread)."""
    backend = current()
    try:
        return backend.get_password(service, account)
    except Exception as exc:  # any backend failure: D-Bus, a locked or dismissed keyring
        raise _failed("read the secret", exc) from exc


def set_secret(service: str, account: str, value: str) -> KeyringBackend:
    """Store ``value``; return the backend it went to (blocking: run in a worker thread)."""
    backend = current()
    try:
        backend.set_password(service, account, value)
    except Exception as exc:
        raise _failed("store the secret", exc, value) from exc
    return backend


def delete_secret(service: str, account: str) -> bool:
    """Delete the stored value; False when there was none (blocking: run in a worker thread)."""
    backend = current()
    try:
        backend.delete_password(service, account)
    except keyring.errors.PasswordDeleteError:
        return False
    except Exception as exc:
        raise _failed("delete the secret", exc) from exc
    return True
