"""The smallest honest pygls 2.x language server: nothing registered, served over stdio.

The baseline of the cold-start and memory benchmarks: whatever s-code costs beyond this is s-code's.
"""

from pygls.lsp.server import LanguageServer


def main() -> None:
    LanguageServer("minimal", "0").start_io()


if __name__ == "__main__":
    main()
