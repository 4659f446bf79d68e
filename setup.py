"""The wheel's build hook (setuptools; everything else is in pyproject.toml).

A wheel carries the sandbox's exec helper compiled for the platform it is built on:
``build_py`` compiles ``server/s_code/sandbox/launch.c`` into ``s_code/sandbox/bin/s-code-launch``
with the same command and checks as the run-time fallback (``s_code/sandbox/launcher.py``, loaded
here by path: it needs only the standard library). The wheel is tagged for the platform and for
any Python 3 (``py3-none-linux_x86_64``): the helper does not link against Python. An editable
install ships no helper (the sidecar compiles one on first use), and neither does the sdist, which
builds the same wheel. With no C compiler the build fails with one line, unless
``S_CODE_WHEEL_WITHOUT_HELPER=1`` asks for a wheel that compiles the helper on first use.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py
from setuptools.errors import SetupError

LAUNCHER = Path(__file__).resolve().parent / "server" / "s_code" / "sandbox" / "launcher.py"


def _launcher() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_s_code_build_launcher", LAUNCHER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses looks the module up
    spec.loader.exec_module(module)
    return module


class BuildPyWithHelper(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        launcher = _launcher()
        compiler = launcher.find_compiler()
        if compiler is None:
            if os.environ.get("S_CODE_WHEEL_WITHOUT_HELPER") == "1":
                return
            raise SetupError(
                "no C compiler (cc or gcc, or $CC) to build the sandbox's exec helper into the "
                "wheel; install one, or set S_CODE_WHEEL_WITHOUT_HELPER=1"
            )
        package = Path(self.build_lib) / "s_code" / "sandbox"
        out = package / "bin" / launcher.NAME
        launcher.compile_helper(compiler, out, package / "launch.c")
        why = launcher.check(out)
        if why is not None:
            raise SetupError(f"the exec helper built for the wheel {why}")


class BinaryDistribution(Distribution):
    def has_ext_modules(self) -> bool:
        return True  # a native executable: a platform wheel, installed in platlib


class PlatformWheel(bdist_wheel):
    """A platform wheel for any Python 3: the helper does not link against Python."""

    def get_tag(self) -> tuple[str, str, str]:
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildPyWithHelper, "bdist_wheel": PlatformWheel},
)
