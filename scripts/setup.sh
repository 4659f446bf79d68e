#!/usr/bin/env bash
# What `make demo` and `make test` need from the system, installed when missing (Debian and
# derivatives: apt-get, as root or through sudo). One line per package says what and why; nothing
# is installed that is already there. `.ci/run` calls this too (through `make test`).
#   scripts/setup.sh demo   the demo: Python's venv, git, the sandbox (bubblewrap, a C compiler)
#   scripts/setup.sh test   the demo's, and the test suite's: Node, a keyring, Chromium, Emacs ...
set -euo pipefail
what="${1:-test}"
need=()
why=()
want() { # want PACKAGE WHY: when its check (the rest of the line, run by the caller) failed
  need+=("$1")
  why+=("$1: $2")
}
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

command -v git >/dev/null || want git "the workspace's git inspection and the tests' repositories"
python3 -c 'import ensurepip, venv' 2>/dev/null || want python3-venv "make creates .venv"
command -v bwrap >/dev/null || want bubblewrap "the command sandbox's tier 1"
command -v cc >/dev/null || want gcc "compiles the sandbox's exec helper in a checkout"
have_pkg libc6-dev || want libc6-dev "the C library headers of the exec helper"
ldconfig -p 2>/dev/null | grep -q 'libseccomp.so.2' || want libseccomp2 "the seccomp program"
if [ "$what" = test ]; then
  command -v make >/dev/null || want make "the README's commands"
  command -v unshare >/dev/null || want util-linux "unshare, for the degraded-tier test"
  command -v dbus-daemon >/dev/null || want dbus "a private session bus for the keyring tests"
  command -v gnome-keyring-daemon >/dev/null || want gnome-keyring "a real keyring (credential handles)"
  command -v npm >/dev/null || want npm "the VS Code extension's build and tests, the MCP and Codex references"
  command -v node >/dev/null || want nodejs "the VS Code extension's build and tests"
  have_pkg libkrb5-dev || want libkrb5-dev "code-server's native modules (the real-VS-Code test)"
  command -v g++ >/dev/null || want g++ "code-server's native modules (the real-VS-Code test)"
  [ -x /usr/bin/chromium ] || want chromium "the browser Playwright drives for the real-VS-Code test"
  command -v emacs >/dev/null || want emacs-nox "the Emacs (eglot) client test"
  emacs --batch -q --eval "(require 'eglot)" >/dev/null 2>&1 ||
    want elpa-eglot "eglot, Emacs's LSP client (built in from Emacs 29)"
fi

[ ${#need[@]} -eq 0 ] && exit 0
for line in "${why[@]}"; do echo "setup: installing $line"; done
if ! command -v apt-get >/dev/null; then
  echo "setup: no apt-get here: install the packages above with your system's package manager" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "setup: not root and no password-less sudo: run  sudo apt-get install ${need[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
