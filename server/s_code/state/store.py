"""One SQLite database for everything the sidecar persists, one namespace per canonical workspace.

The file lives in ``platformdirs.user_state_dir("s-code")`` (``$XDG_STATE_HOME/s-code`` on Linux)
unless ``S_CODE_STATE_DIR`` names another directory. The schema is versioned with
``PRAGMA user_version``: :data:`MIGRATIONS` are applied in order, each in one transaction, and never
edited once released (add a new one instead).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from typing import Any

STATE_DIR_ENV = "S_CODE_STATE_DIR"
DB_NAME = "state.sqlite3"

MIGRATIONS: tuple[str, ...] = (
    # 1: workspaces and per-workspace key/value state (the plan lives here).
    """
    CREATE TABLE workspaces (
        id INTEGER PRIMARY KEY,
        canonical_path TEXT NOT NULL UNIQUE,
        created_at REAL NOT NULL
    );
    CREATE TABLE workspace_state (
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value_json TEXT NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (workspace_id, key)
    );
    """,
    # 2: turns, their undo records (the edit journal) and cross-process reservations.
    """
    CREATE TABLE turns (
        id TEXT PRIMARY KEY,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        began_at REAL NOT NULL,
        ended_at REAL,
        undone_at REAL
    );
    CREATE TABLE undo_records (
        id INTEGER PRIMARY KEY,
        turn_id TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
        root TEXT NOT NULL,
        rel TEXT NOT NULL,
        display TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'applied', 'undone')),
        via TEXT NOT NULL CHECK (via IN ('disk', 'editor')),
        created INTEGER NOT NULL,
        original BLOB,
        sha_before TEXT,
        sha_after TEXT NOT NULL,
        temp_name TEXT,
        recorded_at REAL NOT NULL
    );
    CREATE INDEX undo_records_turn ON undo_records (turn_id, id);
    CREATE INDEX undo_records_pending ON undo_records (status) WHERE status = 'pending';
    CREATE TABLE reservations (
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        target TEXT NOT NULL,
        owner TEXT NOT NULL,
        pid INTEGER NOT NULL,
        expires_at REAL NOT NULL,
        PRIMARY KEY (workspace_id, target)
    );
    """,
    # 3: the approval audit log (issue 4): every decision on a card, and what then ran.
    """
    CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        at REAL NOT NULL,
        card_id TEXT NOT NULL,
        digest TEXT NOT NULL,
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        target TEXT NOT NULL,
        decision TEXT NOT NULL,
        mode TEXT NOT NULL,
        ran_json TEXT,
        finished_at REAL
    );
    CREATE INDEX audit_log_workspace ON audit_log (workspace_id, id);
    """,
    # 4: the snapshot of what a running command must not change (issue 16, S23): written before
    # the command starts, removed once the check after it is done; a row left behind by a
    # sidecar that died is restored at the next session's start.
    """
    CREATE TABLE command_snapshots (
        id INTEGER PRIMARY KEY,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        root TEXT NOT NULL,
        pid INTEGER NOT NULL,
        boot TEXT NOT NULL,
        started_at REAL NOT NULL,
        data BLOB NOT NULL
    );
    """,
    # 5: trust in host processes (issue 17): the hash of exactly what was approved, per entry;
    # for an MCP server also the definitions of the tools it had (a changed one is hidden).
    # scope: "" for the user's own layer, the workspace's canonical path for its layer.
    """
    CREATE TABLE host_trust (
        id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL,
        kind TEXT NOT NULL,
        layer TEXT NOT NULL,
        name TEXT NOT NULL,
        hash TEXT NOT NULL,
        tools_json TEXT,
        approved_at REAL NOT NULL,
        UNIQUE (scope, kind, layer, name)
    );
    CREATE TABLE host_pids (
        pid INTEGER NOT NULL,
        starttime INTEGER NOT NULL,
        boot TEXT NOT NULL,
        owner INTEGER NOT NULL,
        label TEXT NOT NULL,
        PRIMARY KEY (pid, starttime, boot)
    );
    """,
)


def state_dir() -> str:
    override = os.environ.get(STATE_DIR_ENV)
    if override:
        return override
    from platformdirs import user_state_dir

    return user_state_dir("s-code", appauthor=False)


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema up to date; return the version reached. Newer than known is refused."""
    current = schema_version(conn)
    if current > len(MIGRATIONS):
        raise RuntimeError(
            f"the state database has schema {current}, newer than this s-code knows "
            f"({len(MIGRATIONS)}); upgrade s-code"
        )
    for version in range(current + 1, len(MIGRATIONS) + 1):
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            if schema_version(conn) >= version:  # another process got there first
                continue
            for statement in MIGRATIONS[version - 1].split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version}")
    return schema_version(conn)


class Store:
    """The database connection, shared by the sessions of one process (serialised by a lock)."""

    def __init__(self, path: str) -> None:
        parent = os.path.dirname(path)
        os.makedirs(parent, mode=0o700, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=10.0
        )
        self._conn.execute("PRAGMA foreign_keys = ON")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        # Switching to WAL and migrating can meet another process doing the same at start-up;
        # SQLite does not always wait its busy timeout there, so retry for a bounded time.
        deadline = time.monotonic() + 10.0
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode = WAL")
                with self._lock:
                    self.version = migrate(self._conn)
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    @classmethod
    def open_default(cls) -> Store:
        return cls(os.path.join(state_dir(), DB_NAME))

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def workspace(self, canonical_path: str) -> WorkspaceStore:
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR IGNORE INTO workspaces (canonical_path, created_at) VALUES (?, ?)",
                (canonical_path, time.time()),
            )
            row = self._conn.execute(
                "SELECT id FROM workspaces WHERE canonical_path = ?", (canonical_path,)
            ).fetchone()
        return WorkspaceStore(self, int(row[0]), canonical_path)

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self._conn:
            return self._conn.execute(sql, args).fetchall()

    def transaction(self, work: Any) -> Any:
        """Run ``work(connection)`` in one ``BEGIN IMMEDIATE`` transaction."""
        with self._lock, self._conn:
            self._conn.execute("BEGIN IMMEDIATE")
            return work(self._conn)


class WorkspaceStore:
    """The namespace of one canonical workspace inside the store."""

    def __init__(self, store: Store, workspace_id: int, canonical_path: str) -> None:
        self.store = store
        self.id = workspace_id
        self.canonical_path = canonical_path

    def get(self, key: str) -> Any | None:
        rows = self.store.execute(
            "SELECT value_json FROM workspace_state WHERE workspace_id = ? AND key = ?",
            (self.id, key),
        )
        return json.loads(rows[0][0]) if rows else None

    def put(self, key: str, value: Any) -> None:
        self.store.execute(
            "INSERT INTO workspace_state (workspace_id, key, value_json, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (workspace_id, key) DO UPDATE SET "
            "value_json = excluded.value_json, updated_at = excluded.updated_at",
            (self.id, key, json.dumps(value), time.time()),
        )
