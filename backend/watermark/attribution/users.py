"""The service's registry of users and their watermarks: a real embedded database (SQLite).

Default file: ``$METHOD_LAB_ATTRIBUTION_DB`` or ``<user cache>/attribution_users.sqlite`` (``runtime.cache_dir()``);
the CLI takes ``--db PATH``. Schema::

    meta(key TEXT PRIMARY KEY, value TEXT)             -- n_bits, schema version, created
    users(id INTEGER PRIMARY KEY, name TEXT UNIQUE, code INTEGER NOT NULL UNIQUE,
          strategy TEXT NOT NULL, created REAL NOT NULL)

``code`` is the packed watermark (bit j at ``1 << j``) stored as a signed 64-bit integer (SQLite's INTEGER). New users
get codes from a selection strategy (:mod:`backend.watermark.codes`) that extends the codes already in the database, and are inserted in
one transaction: a failure (or a cancel) leaves no half-created user. Matching loads all codes once into an in-memory
bit-packed :class:`~backend.watermark.attribution.UserPool` (cached per file state).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from backend.errors import InputError
from backend.runtime import Progress, cache_dir, sub_progress
from backend.watermark import codes as _codes
from backend.watermark.attribution.bounds import UserPool

SCHEMA_VERSION = "1"
MAX_USERS_PER_CALL = 2_000_000


def default_db_path() -> Path:
    env = os.environ.get("METHOD_LAB_ATTRIBUTION_DB")
    return Path(env).expanduser() if env else cache_dir() / "attribution_users.sqlite"


def _to_signed(packed: np.ndarray) -> np.ndarray:
    return np.asarray(packed, dtype=np.uint64).view(np.int64)


def _to_unsigned(signed: np.ndarray) -> np.ndarray:
    return np.asarray(signed, dtype=np.int64).view(np.uint64)


@dataclass(frozen=True)
class User:
    id: int
    name: str | None
    code: int  # packed, unsigned
    strategy: str
    created: float

    def bits(self, n: int) -> np.ndarray:
        return _codes.unpack_bits(np.array([self.code], dtype=np.uint64), n)[0]

    def hex(self, n: int) -> str:
        return f"{self.code:0{(n + 3) // 4}x}"


_pool_cache: dict[tuple[str, int, int], UserPool] = {}
_pool_lock = threading.Lock()


class UserRegistry:
    """Open (or create) a users database. ``create=False`` refuses a missing file with an InputError."""

    def __init__(self, path: str | Path | None = None, n_bits: int = 64, create: bool = True):
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        if not self.path.exists():
            if not create:
                raise InputError(f"No users database at {self.path}. Create users first "
                                 "(`python -m backend attribution users create --count N`).")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with self._connect() as con:
                con.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                con.execute("CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY, name TEXT UNIQUE, "
                            "code INTEGER NOT NULL UNIQUE, strategy TEXT NOT NULL, created REAL NOT NULL)")
                row = con.execute("SELECT value FROM meta WHERE key = 'n_bits'").fetchone()
                if row is None:
                    con.execute("INSERT INTO meta VALUES ('n_bits', ?), ('schema', ?), ('created', ?)",
                                (str(n_bits), SCHEMA_VERSION, str(time.time())))
                    self.n_bits = int(n_bits)
                else:
                    self.n_bits = int(row[0])
        except sqlite3.DatabaseError as err:
            raise InputError(f"{self.path} is not a usable users database ({err}). Point --db at another file "
                             "or delete this one.") from None
        if not 1 <= self.n_bits <= 64:
            raise InputError(f"{self.path} declares {self.n_bits}-bit codes; this lab supports 1-64.")

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
        con.execute("PRAGMA journal_mode=WAL")
        return _Tx(con)

    # ------------------------------------------------------------------------------------------------ queries
    def count(self) -> int:
        with self._connect() as con:
            return int(con.execute("SELECT COUNT(*) FROM users").fetchone()[0])

    def get(self, user_id: int) -> User:
        with self._connect() as con:
            row = con.execute("SELECT id, name, code, strategy, created FROM users WHERE id = ?",
                              (int(user_id),)).fetchone()
        if row is None:
            raise InputError(f"No user with id {user_id} in {self.path.name} ({self.count():,} users). "
                             "Pick an existing id or create users first.")
        return User(int(row[0]), row[1], int(np.int64(row[2]).view(np.uint64)), row[3], float(row[4]))

    def list(self, limit: int = 50, offset: int = 0) -> list[User]:
        with self._connect() as con:
            rows = con.execute("SELECT id, name, code, strategy, created FROM users ORDER BY id LIMIT ? OFFSET ?",
                               (int(limit), int(offset))).fetchall()
        return [User(int(r[0]), r[1], int(np.int64(r[2]).view(np.uint64)), r[3], float(r[4])) for r in rows]

    def strategies(self) -> dict[str, int]:
        with self._connect() as con:
            return {s: int(c) for s, c in con.execute("SELECT strategy, COUNT(*) FROM users GROUP BY strategy")}

    def pool(self) -> UserPool:
        """All users' codes as an in-memory bit-packed pool (loaded once per database state)."""
        st = self.path.stat()
        wal = self.path.with_name(self.path.name + "-wal")
        key = (str(self.path.resolve()), st.st_mtime_ns, wal.stat().st_mtime_ns if wal.exists() else 0)
        with _pool_lock:
            hit = _pool_cache.get(key)
        if hit is not None:
            return hit
        with self._connect() as con:
            rows = con.execute("SELECT id, code FROM users ORDER BY id").fetchall()
        if not rows:
            raise InputError(f"The users database {self.path.name} has no users yet; create some first.")
        arr = np.asarray(rows, dtype=np.int64)
        pool = UserPool(_to_unsigned(arr[:, 1]), self.n_bits, ids=arr[:, 0])
        with _pool_lock:
            _pool_cache.clear()
            _pool_cache[key] = pool
        return pool

    # ------------------------------------------------------------------------------------------------ writes
    def create_users(self, count: int, strategy: str = "absta", seed: int | None = None, depth: int = 4,
                     names: list[str] | None = None, progress: Progress | None = None) -> list[int]:
        """Register ``count`` new users with codes from ``strategy`` that extend the existing codes; all or nothing.

        Returns the new ids. A sequential strategy (A-BSTA, NRG: it grows superlinearly) is limited to its
        ``max_users`` users in the database; use ``random`` beyond."""
        strat = _codes.get_method(strategy)
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or not 1 <= count <= MAX_USERS_PER_CALL:
            raise InputError(f"count must be between 1 and {MAX_USERS_PER_CALL:,}.")
        if names is not None and len(names) != count:
            raise InputError("give one name per new user (or none).")
        with self._connect() as con:
            rows = con.execute("SELECT code FROM users ORDER BY id").fetchall()
            next_id = int(con.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM users").fetchone()[0])
        existing = _to_unsigned(np.asarray([r[0] for r in rows], dtype=np.int64))
        if strat.sequential and existing.size + count > strat.max_users:
            raise InputError(f"{strat.name} grows superlinearly: the lab serves it up to {strat.max_users:,} users "
                             f"(the database would hold {existing.size + count:,}). Use --strategy random for "
                             "larger populations.")
        seed = int(seed) if seed is not None else int(next_id)
        new = strat(int(count), n=self.n_bits, seed=seed, existing=existing, depth=depth,
                       progress=sub_progress(progress, 0.0, 0.9))
        ids = list(range(next_id, next_id + int(count)))
        now = time.time()
        signed = _to_signed(new)
        try:
            with self._connect() as con:
                con.execute("BEGIN IMMEDIATE")
                try:
                    con.executemany(
                        "INSERT INTO users (id, name, code, strategy, created) VALUES (?, ?, ?, ?, ?)",
                        ((i, names[j] if names else None, int(signed[j]), strat.name, now) for j, i in enumerate(ids)))
                    if progress is not None:
                        progress(0.95, "committing")
                    con.execute("COMMIT")
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
        except sqlite3.IntegrityError as err:
            raise InputError(f"Could not create the users ({err}); nothing was written.") from None
        except sqlite3.DatabaseError as err:
            raise InputError(f"Writing to {self.path} failed ({err}); nothing was written.") from None
        return ids


class _Tx:
    """A sqlite3 connection usable as a context manager that always closes."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con

    def __enter__(self) -> sqlite3.Connection:
        return self.con

    def __exit__(self, *exc: object) -> None:
        self.con.close()


def open_registry(path: str | Path | None = None, must_exist: bool = False) -> UserRegistry:
    return UserRegistry(path, create=not must_exist)


__all__ = ["UserRegistry", "User", "default_db_path", "open_registry"]
