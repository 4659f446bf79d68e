"""tool_search's ranking: BM25 (``bm25s``) over four fields of every tool, weighted.

Fields (:data:`FIELDS`), one BM25 index each, so that each has its own term statistics and length
normalisation (a long description does not dilute a name):

- ``name`` (weight 3): the name split on ``_``, ``-`` and camelCase; ``mcp__<server>__<tool>``
  gives its server's words and its tool's (the ``mcp`` marker, shared by every MCP tool, says
  nothing). A name says what the tool does, in the words agents search with.
- ``parameters`` (1.5): the argument names: identifiers in the vocabulary of names (a
  ``repository`` argument says the tool works on repositories), but about inputs, not the act.
- ``description`` (1): free text, the most words and the most incidental ones.
- ``parameter_text`` (0.5): the arguments' descriptions, mostly boilerplate repeated across a
  server's tools ("Repository owner", "Maximum number of results", "e.g. 'git blame'"). A word
  found only there adds to a tool's score but does not count as matching the query's word.

A tool's score is the sum, over the query's distinct words and the fields, of weight x BM25.
Tools are ranked by how many of the query's words they match (in the first three fields) first,
then by score, then by name: a tool matching more of the words ranks higher, and a query that
matches nothing returns nothing.

Words: lowercased, split on punctuation, ``_`` and camelCase, English function words dropped.
Each word is indexed as written and, when it differs, as its singular (:func:`stem`, a light
S-stemmer), and a query word matches either: "files" finds ``read_file``, while a tool that uses
the query's own form ("channels": ``list_channels`` before ``get_channel_history``) scores on
both. tests/unit/test_tool_ranking.py measures these choices on a catalog of realistic tools
(top-1 of 60 queries: 57 as here; 55 with singulars only, 54 without stemming; 56 with equal
field weights, or with words found in parameter descriptions counted as matched; 55 ranked by
score alone; parameter descriptions weighted 0 to 1 move one query).

``bm25s`` (and numpy) are imported when the first index is built, never at start-up. An index is
built once per registry version (:attr:`Registry.version`) and cached per registry.
"""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from s_code.tools.registry import Registry, ToolDef


@dataclass(frozen=True)
class Field:
    name: str
    weight: float
    matches: bool
    """Whether a query word found in this field counts as matched (for the ranking's first key)."""


FIELDS = (
    Field("name", 3.0, True),
    Field("parameters", 1.5, True),
    Field("description", 1.0, True),
    Field("parameter_text", 0.5, False),
)
MAX_WORDS = 32
"""Distinct query words scored (a query is at most 500 characters): bounds a search's cost."""
STOPWORDS = frozenset(
    "a an and are as at be but by for from has have if in into is it its of on or so such that "  # noqa: SIM905
    "the their then there these they this those to was were which will with".split()
)
_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_MCP = "mcp__"


def stem(word: str) -> str:
    """An English plural's singular (Harman's S-stemmer, with ``-es`` after a sibilant dropped
    whole): files -> file, entries -> entry, branches -> branch; status, class, axis stay."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("us", "ss", "is")):
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    return word[:-1]


def words(text: str) -> list[str]:
    """The lowercase words of ``text`` (snake_case, kebab-case and camelCase split), without
    English function words."""
    return [part for word in _WORD.findall(text) for part in _parts(word)]


@functools.lru_cache(maxsize=8192)
def _parts(word: str) -> tuple[str, ...]:
    """One run of letters and digits, camelCase split (cached: tools repeat their words)."""
    parts = (part.lower() for part in _CAMEL.split(word))
    return tuple(p for p in parts if p and p not in STOPWORDS)


@functools.lru_cache(maxsize=8192)
def forms(word: str) -> tuple[str, ...]:
    """The terms a word is indexed and searched as: itself, and its singular if that differs."""
    singular = stem(word)
    return (word,) if singular == word else (word, singular)


def tokens(text: str) -> list[str]:
    """The terms of a document: every form of every word."""
    return [term for word in words(text) for term in forms(word)]


def fields_of(tool: ToolDef) -> dict[str, str]:
    """The text of each of :data:`FIELDS` for one tool."""
    props = tool.input_schema.get("properties", {})
    notes = [
        p["description"]
        for p in (props.values() if isinstance(props, dict) else ())
        if isinstance(p, dict) and isinstance(p.get("description"), str)
    ]
    return {
        "name": tool.name.removeprefix(_MCP),
        "parameters": " ".join(tool.argument_names),
        "description": tool.description,
        "parameter_text": " ".join(notes),
    }


@dataclass(frozen=True, eq=False)
class ToolIndex:
    """The BM25 indexes of one version of a registry's tools."""

    version: int
    tools: tuple[ToolDef, ...]
    fields: tuple[tuple[Field, Any], ...]
    """Each field that has any words at all, with its ``bm25s.BM25``."""
    name_rank: Any
    """numpy array: each tool's position in name order (the last tie-break)."""

    @classmethod
    def build(cls, tools: Sequence[ToolDef], version: int) -> ToolIndex:
        import bm25s
        import numpy as np

        _quiet(bm25s)
        texts = [fields_of(t) for t in tools]
        indexes = []
        for field in FIELDS:
            corpus = [tokens(text[field.name]) for text in texts]
            if any(corpus):  # bm25s cannot index a field without a single word
                bm25 = bm25s.BM25()
                bm25.index(corpus, show_progress=False)
                indexes.append((field, bm25))
        order = sorted(range(len(tools)), key=lambda i: tools[i].name)
        rank = np.empty(len(tools), dtype=np.int32)
        rank[order] = np.arange(len(tools), dtype=np.int32)
        return cls(version, tuple(tools), tuple(indexes), rank)

    def search(self, query: str, limit: int) -> list[ToolDef]:
        """The best ``limit`` tools for ``query``: most query words matched, then highest score."""
        import numpy as np

        query_words = list(dict.fromkeys(words(query)))[:MAX_WORDS]
        size = len(self.tools)
        matched = np.zeros(size, dtype=np.int32)
        total = np.zeros(size, dtype=np.float32)
        for word in query_words:
            counted = np.zeros(size, dtype=np.float32)
            extra = np.zeros(size, dtype=np.float32)
            for field, bm25 in self.fields:
                ids = bm25.get_tokens_ids(list(forms(word)))
                if ids:
                    scores = field.weight * bm25.get_scores_from_ids(ids)
                    if field.matches:
                        counted += scores
                    else:
                        extra += scores
            matched += counted > 0
            total += counted + extra
        hits = np.flatnonzero(total > 0)
        order = hits[np.lexsort((self.name_rank[hits], -total[hits], -matched[hits]))]
        return [self.tools[i] for i in order[:limit]]


def _quiet(bm25s: Any) -> None:
    """bm25s sets its logger to DEBUG, so its debug lines would reach s-code's log whatever
    ``S_CODE_LOG`` says: let it inherit the configured level instead."""
    import logging

    logging.getLogger(bm25s.__name__).setLevel(logging.NOTSET)


_INDEXES: weakref.WeakKeyDictionary[Registry, ToolIndex] = weakref.WeakKeyDictionary()


def fresh(registry: Registry) -> ToolIndex | None:
    """The cached index of ``registry`` if it was built from its current version."""
    index = _INDEXES.get(registry)
    return index if index is not None and index.version == registry.version else None


def remember(registry: Registry, index: ToolIndex) -> ToolIndex:
    """Cache ``index`` for ``registry``, unless the registry changed while it was being built."""
    if index.version == registry.version:
        _INDEXES[registry] = index
    return index


def snapshot(registry: Registry) -> tuple[list[ToolDef], int]:
    """The tools and the version to build an index from (the version read first: a change made
    in between costs a rebuild, never a stale index)."""
    version = registry.version
    return list(registry), version


def index_for(registry: Registry) -> ToolIndex:
    """The current index of ``registry``, built here if it is stale."""
    index = fresh(registry)
    if index is None:
        tools, version = snapshot(registry)
        index = remember(registry, ToolIndex.build(tools, version))
    return index


def search(registry: Registry, query: str, limit: int) -> list[ToolDef]:
    return index_for(registry).search(query, limit)
