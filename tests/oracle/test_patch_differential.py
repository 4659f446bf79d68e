"""The patch form equals Codex's apply_patch inside the strict subset, and refuses only what the
strict rule refuses: a randomized differential (tests/oracle/differential.py) over generated
workspaces and patches (tests/oracle/cases.py), in batches; one case in five also goes through the
real tool path (apply_patch on a workspace folder), where a refusal must leave every byte as it
was. Without the oracle (`make oracle`) the Codex tests skip, or fail under CI=true.

``S_CODE_PATCH_DIFF_BATCHES`` sets the number of batches (of 25 cases; default 120); the counts
per outcome are printed at the end (``pytest -s``).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from s_code.protocol.errors import ErrorKind, SCodeError
from tests.oracle import codex_oracle as codex
from tests.oracle.cases import Case, cases
from tests.oracle.differential import (
    after,
    files_below,
    judge,
    refusal,
    revisions,
    scode,
    write_files,
)
from tests.oracle.reference import Applied, Outcome, Refused, reference
from tests.unit.test_edit_request import EngineWorkspace

BATCH = 25
BATCHES = int(os.environ.get("S_CODE_PATCH_DIFF_BATCHES", "120"))
END_TO_END_EVERY = 5
SCENARIOS = Path(__file__).resolve().parents[1] / "fixtures" / "patch_scenarios"


def patch(*sections: str) -> str:
    return "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"


# Cases the differential found, with what Codex 0.169 wrote (None: s-code refuses; why).
FOUND: list[tuple[Case, dict[str, str] | None, str]] = [
    # An update kept every line it does not name, a final blank line included (issue 22).
    (Case({"f": "x\ny\n\n"}, patch("*** Update File: f\n@@\n-x\n+X\n")), {"f": "X\ny\n\n"}, ""),
    (Case({"f": "a\n\n"}, patch("*** Update File: f\n@@\n-a\n+b\n")), {"f": "b\n\n"}, ""),
    (Case({"f": "a\n"}, patch("*** Update File: f\n@@\n a\n+\n")), {"f": "a\n\n"}, ""),
    (Case({"f": "a\n\n\n"}, patch("*** Update File: f\n@@\n a\n-\n")), {"f": "a\n\n"}, ""),
    # Shrunk by hypothesis on the old engine: a hunk of one blank context line emptied the file.
    (Case({"f": "\n"}, patch("*** Update File: f\n@@\n \n")), {"f": "\n"}, ""),
    # A lone CR: Codex ends lines there (and writes CR endings after one); s-code refuses.
    (Case({"f": "a\rb\nc\n"}, patch("*** Update File: f\n@@\n-c\n+C\n")), None, "target"),
    (Case({"f": "a\nb\rc\n"}, patch("*** Update File: f\n@@\n-a\n+A\n")), None, "target"),
]


def found_reason(outcome: Outcome) -> str:
    return outcome.reason if isinstance(outcome, Refused) else ""


@pytest.mark.parametrize(("case", "written", "why"), FOUND)
def test_found_cases(case: Case, written: dict[str, str] | None, why: str) -> None:
    """Without the oracle too: s-code and the reference give what Codex wrote, or both refuse."""
    mine = scode(case)
    assert mine == reference(case.files, case.patch)
    if written is None:
        assert found_reason(mine) == why
    else:
        assert mine == Applied(written)


def test_the_reference_itself() -> None:
    # Hand-checked values, so that a wrong reference cannot hide an engine bug.
    update = "*** Update File: f\n"
    assert reference({"f": "a\nb\n"}, patch(update, "@@\n-b\n+c\n")) == Applied({"f": "a\nc\n"})
    assert reference({"f": "a\n"}, patch(update, "@@\n-a\n")) == Applied({"f": ""})
    assert reference({"f": "b\nb\n"}, patch(update, "@@\n-b\n")) == Refused("ambiguous", (1, 2))
    assert reference({"f": "a\nb\n"}, patch(update, "@@\n-b\n@@\n-a\n")) == Refused("not_found")
    assert reference({"f": "a\r\n"}, patch(update, "@@\n-a\n")) == Refused("target")
    assert reference({"f": "a"}, patch(update, "@@\n-a\n")) == Refused("target")
    assert reference({"f": "a\n"}, patch(update, "@@\n+b\n")) == Refused("syntax")
    assert reference({"f": "a\n"}, patch(update, "@@ x\n-a\n")) == Refused("syntax")
    assert reference({}, patch("*** Add File: n\n+x\n+\n")) == Applied({"n": "x\n\n"})
    assert reference({"f": "a\nb\n"}, patch(update, "@@\n-a\n+b\n@@\n-b\n+c\n")) == Applied(
        {"f": "b\nc\n"}
    )


@pytest.fixture(scope="module")
def oracle() -> Path:
    return codex.require()


def end_to_end(ws: EngineWorkspace, case: Case) -> tuple[Refused | None, dict[str, bytes]]:
    """The case through the real tool path (apply_patch on a workspace folder holding just its
    files): the refusal, if any, and the files afterwards. A refusal must write nothing."""
    write_files(ws.root, case.files)
    before = files_below(ws.root)
    try:
        ws.run({"patch": case.patch, "revisions": revisions(case)})
    except SCodeError as err:
        assert files_below(ws.root) == before, f"a refusal wrote: {case!r}"
        return refusal(err), before
    return None, files_below(ws.root)


def test_patch_form_against_codex(oracle: Path, tmp_path: Path) -> None:
    ws = EngineWorkspace(tmp_path / "engine")
    pool = ThreadPoolExecutor(max_workers=4)
    counts: Counter[str] = Counter()
    batches = itertools.count()

    @settings(
        max_examples=BATCHES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(batch=st.lists(cases(), min_size=BATCH, max_size=BATCH))
    @example(batch=[case for case, _, _ in FOUND])
    def check(batch: list[Case]) -> None:
        verdicts = judge(oracle, tmp_path / f"codex{next(batches)}", batch, pool)
        problems = [v.problem for v in verdicts if v.problem]
        for case in batch[::END_TO_END_EVERY]:
            refused, tree = end_to_end(ws, case)
            pure = scode(case)
            if isinstance(pure, Refused):
                same = refused == pure
            else:
                same = refused is None and tree == after(case, pure)
            if not same:
                problems.append(f"the tool path differs: {refused!r}, {tree!r}: {case!r}")
        counts.update(v.label for v in verdicts)
        counts["through the tool path"] += len(batch[::END_TO_END_EVERY])
        assert not problems, "\n\n".join(problems)

    try:
        check()
    finally:
        ws.close()
        pool.shutdown()
    total = sum(n for label, n in counts.items() if label != "through the tool path")
    print(f"\npatch differential: {total} cases")
    for label, n in counts.most_common():
        print(f"{n:7d}  {label}")
    if total >= 1000:  # the generator still reaches every kind of outcome
        assert counts["identical success"] >= total // 4, counts
        for reason in ("syntax", "target", "not_found", "ambiguous"):
            assert counts[f"s-code refused ({reason}), reference agrees, Codex applied"], reason


def scenario_dirs() -> list[Path]:
    return sorted(p for p in SCENARIOS.iterdir() if p.is_dir())


@pytest.mark.parametrize("scenario", scenario_dirs(), ids=lambda p: p.name)
def test_scenario_against_codex(oracle: Path, scenario: Path, tmp_path: Path) -> None:
    """The hand-written scenarios: Codex writes each accepting one's expected/ tree; for each
    refusing one, the reference refuses too."""
    inputs = scenario / "input"
    if inputs.is_dir():
        shutil.copytree(inputs, tmp_path, dirs_exist_ok=True)
    files = {k: v.decode() for k, v in files_below(tmp_path).items()}
    text = (scenario / "patch.txt").read_bytes().decode()
    ref = reference(files, text)
    error = scenario / "error.json"
    if error.is_file():
        data = json.loads(error.read_text())
        kind = ErrorKind(data.pop("kind"))
        if kind is not ErrorKind.STALE_REVISION:  # (an Add File over a file: not the patch)
            assert ref == refusal(SCodeError(kind, "", **data))
        return
    assert isinstance(ref, Applied), ref
    assert after(Case(files, text), ref) == files_below(scenario / "expected")
    run = codex.apply(oracle, tmp_path, text)
    assert run.applied, run.output
    assert files_below(tmp_path) == files_below(scenario / "expected")
