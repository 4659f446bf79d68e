"""Benchmark 4: search_text over a generated 20,000-file tree vs rg run directly with its argv."""

from __future__ import annotations

import os
import random
import subprocess
import time

from harness import Result, median, scode_argv, server_env, started

from s_code.protocol import methods
from s_code.workspace import search

TARGET = 1.3
PATTERN = r"needle_[0-9]+"
TOTAL_FILES = 20_000
# Above the few hundred matches, so neither side stops early (the tool allows up to 2,000).
MAX_RESULTS = 2_000
DEFAULT_MAX_RESULTS = 100
_WORDS = (
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "iota", "kappa", "lambda",
    "sigma", "omega", "function", "return", "value", "index", "buffer", "stream", "token",
    "parse", "render", "update",
)  # fmt: skip


def _text(rng: random.Random, lines: int) -> str:
    return "".join(" ".join(rng.choices(_WORDS, k=rng.randint(4, 10))) + "\n" for _ in range(lines))


def _write(path: str, rng: random.Random, needles: int, serial: int) -> None:
    lines = _text(rng, rng.randint(6, 14)).splitlines(keepends=True)
    for k in range(needles):
        lines.insert(rng.randrange(len(lines) + 1), f"found needle_{serial}{k} here\n")
    with open(path, "w") as f:
        f.write("".join(lines))


def make_tree(root: str) -> int:
    """20,000 small files in nested directories; returns the matching lines outside .gitignore.

    19,200 searched files under src/ (20 packages x 20 modules x 48 files), of which 300 hold a
    match (30 of them two), and 800 ignored ones (500 under build/, 300 ``*.log``), 100 of them
    with matches that must not be reported.
    """
    rng = random.Random(20_000)
    os.makedirs(root)
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write("build/\n*.log\n")
    searched = [
        os.path.join(root, "src", f"pkg{p:02d}", f"mod{m:02d}", f"file{n:02d}.txt")
        for p in range(20)
        for m in range(20)
        for n in range(48)
    ]
    ignored = [
        os.path.join(root, "build", f"out{d}", f"gen{n:02d}.txt")
        for d in range(10)
        for n in range(50)
    ]
    ignored += [
        os.path.join(root, "src", f"pkg{i % 20:02d}", f"run{i:03d}.log") for i in range(300)
    ]
    assert len(searched) + len(ignored) == TOTAL_FILES
    for d in {os.path.dirname(p) for p in searched + ignored}:
        os.makedirs(d, exist_ok=True)
    hits = set(rng.sample(range(len(searched)), 300))
    doubles = set(rng.sample(sorted(hits), 30))
    expected = 0
    for i, path in enumerate(searched):
        needles = (2 if i in doubles else 1) if i in hits else 0
        expected += needles
        _write(path, rng, needles, i)
    ignored_hits = set(rng.sample(range(len(ignored)), 100))
    for i, path in enumerate(ignored):
        _write(path, rng, 1 if i in ignored_hits else 0, 100_000 + i)
    return expected


def _rg_env() -> dict[str, str]:
    keep = getattr(search, "_ENV_KEEP", ("PATH", "LANG", "LC_ALL", "LC_CTYPE"))
    return {k: os.environ[k] for k in keep if k in os.environ}


def run(scratch: str, *, quick: bool) -> Result:
    runs = 3 if quick else 7
    root = os.path.join(scratch, "search-tree")
    t0 = time.perf_counter()
    expected = make_tree(root)
    print(
        f"[4] search_text {PATTERN!r} over {TOTAL_FILES} files "
        f"(generated in {time.perf_counter() - t0:.1f}s, {expected} matches): {runs} runs each"
    )
    argv = search.build_argv(
        PATTERN, fixed_strings=False, ignore_case=False, globs=[], include_ignored=False
    )
    env = server_env(os.path.join(scratch, "state-search"))
    rg_env = _rg_env()

    def direct() -> bytes:
        # stdout is a pipe read to the end: rg must not see /dev/null (it would stop at a match).
        done = subprocess.run(
            argv,
            cwd=root,
            env=rg_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        return done.stdout

    with started(scode_argv(), env, root) as (client, _):

        def through(max_results: int) -> dict[str, object]:
            reply: dict[str, object] = client.request(
                methods.SEARCH_TEXT, {"pattern": PATTERN, "max_results": max_results}
            )
            return reply

        # Warm-up (page cache, dentries) and a check that both sides find the same thing.
        rg_matches = direct().count(b'"type":"match"')
        reply = through(MAX_RESULTS)
        found = reply["matches"]
        assert isinstance(found, list)
        assert rg_matches == expected == len(found), (rg_matches, expected, len(found))
        assert reply["truncated"] is False
        rg_s: list[float] = []
        scode_s: list[float] = []
        bounded_s: list[float] = []
        for i in range(runs):
            first, second = (direct, through) if i % 2 == 0 else (through, direct)
            for side in (first, second):
                t = time.perf_counter()
                if side is direct:
                    direct()
                    rg_s.append(time.perf_counter() - t)
                else:
                    through(MAX_RESULTS)
                    scode_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            through(DEFAULT_MAX_RESULTS)
            bounded_s.append(time.perf_counter() - t)
    ms = 1e3
    print(f"  rg direct            median {median(rg_s) * ms:7.1f} ms  (argv of build_argv)")
    print(
        f"  s-code searchText    median {median(scode_s) * ms:7.1f} ms  (max_results={MAX_RESULTS})"
    )
    print(
        f"  (info) max_results={DEFAULT_MAX_RESULTS} median {median(bounded_s) * ms:7.1f} ms"
        " (stops rg early; not the compared number)"
    )
    result = Result(
        key="search_text",
        title=f"search_text over {TOTAL_FILES} files vs rg (median)",
        unit="ms",
        scode=median(scode_s) * ms,
        baseline=median(rg_s) * ms,
        baseline_name="rg direct",
        target=TARGET,
        details={
            "runs": runs,
            "files": TOTAL_FILES,
            "matches": expected,
            "max_results": MAX_RESULTS,
            "argv": argv,
            "default_bound_median_ms": median(bounded_s) * ms,
            "samples_ms": {"s-code": [v * ms for v in scode_s], "rg": [v * ms for v in rg_s]},
        },
    )
    result.report()
    return result
