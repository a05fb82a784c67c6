"""Database access for both backends behind one small async interface.

Why not SQLAlchemy's async engine: on this service's hot paths it costs 3x in throughput
(docs/development.md, Database rules). Tables and migrations are SQLAlchemy/Alembic;
queries are plain SQL strings with ``:name`` parameters that run unchanged on both
backends (``column IN :name`` with a list bound: a list parameter, see _LIST_PARAM), or
SQLAlchemy Core statements for the few dynamic queries, compiled here.

- SQLite: the standard ``sqlite3`` module called directly on the event loop (a query is
  tens of microseconds; a thread hop costs more). WAL, so readers never wait for the
  writer. One write connection guarded by an asyncio lock; ``BEGIN IMMEDIATE`` is retried
  without blocking the loop while another process holds the write lock.
- PostgreSQL: an asyncpg pool; parameters are rewritten to ``$n`` once per SQL string.

Both raise `DatabaseUnavailable` when the database cannot answer right now (PostgreSQL
restarting or unreachable, connections cut; SQLite locked by another process for longer
than the lock timeout, or its file unreadable): the request pipeline answers it 503 with
Retry-After instead of a 500. The pool reconnects by itself: asyncpg replaces a closed
connection when it is next acquired.

Conventions every table follows, so rows look the same from both drivers: instants are
BIGINT microseconds since the Unix epoch (UTC), JSON documents are TEXT produced by
orjson, booleans are SMALLINT-free SQL booleans (read them with ``bool()``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import os
import re
import socket
import sqlite3
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson
import structlog
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.sql import ClauseElement

from autoport.secrets_file import private_directory, private_file

log = structlog.get_logger("autoport.db")

Params = Mapping[str, Any] | None
Dialect = Literal["sqlite", "postgresql"]


class Row(Protocol):
    """Both sqlite3.Row and asyncpg.Record: indexable by column name."""

    def __getitem__(self, key: str | int, /) -> Any: ...

    def keys(self) -> Iterable[str]: ...


Statement = str | ClauseElement

_NAMED_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_SQLITE_COMPILER = sqlite_dialect.dialect(paramstyle="named")
_PG_COMPILER = pg_dialect.dialect(paramstyle="named")  # type: ignore[no-untyped-call]


@lru_cache(maxsize=2048)
def _to_dollar_params(sql: str) -> tuple[str, tuple[str, ...]]:
    """Rewrite ``:name`` placeholders to asyncpg's ``$n``; cached per SQL string."""
    names: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in names:
            names.append(name)
        return f"${names.index(name) + 1}"

    return _NAMED_PARAM.sub(replace, sql), tuple(names)


# `column IN :name` (or NOT IN) with a list or tuple bound to `name`: a list parameter,
# one SQL text and one prepared statement whatever the list's length, where an expanding
# IN of SQLAlchemy is compiled again for each call (15 % of the stream builder's and the
# webhook worker's time per batch). PostgreSQL binds the list as an array (`= ANY`),
# SQLite as JSON text read by json_each.
_LIST_PARAM = re.compile(r"\b(NOT\s+)?IN\s+:([A-Za-z_]\w*)", re.I)


@lru_cache(maxsize=2048)
def _list_params(sql: str, dialect: Dialect) -> tuple[str, tuple[str, ...]]:
    """`sql` with its list parameters written for `dialect`, and their names."""
    names: list[str] = []

    def replace(match: re.Match[str]) -> str:
        negated, name = match.group(1), match.group(2)
        names.append(name)
        if dialect == "postgresql":
            return f"{'<> ALL' if negated else '= ANY'}(:{name})"
        return f"{'NOT IN' if negated else 'IN'} (SELECT value FROM json_each(:{name}))"  # noqa: S608 - a parameter's name

    return _LIST_PARAM.sub(replace, sql), tuple(names)


def _compile(statement: Statement, params: Params, dialect: Dialect) -> tuple[str, Params]:
    if isinstance(statement, str):
        sql, lists = _list_params(statement, dialect)
        if lists and params is not None:
            bound = dict(params)
            for name in lists:
                values = bound[name]
                if not isinstance(values, list | tuple):
                    raise TypeError(f"the list parameter {name!r} takes a list or tuple")
                bound[name] = (
                    list(values) if dialect == "postgresql" else orjson.dumps(list(values)).decode()
                )
            return sql, bound
        return sql, params
    compiled = statement.compile(
        dialect=_SQLITE_COMPILER if dialect == "sqlite" else _PG_COMPILER,
        compile_kwargs={"render_postcompile": True},
    )
    merged = dict(compiled.params)
    if params:
        merged.update(params)
    return str(compiled), merged


class DatabaseUnavailable(Exception):
    """The database cannot answer now (restart, lost connection, lock held elsewhere);
    retrying later may succeed. The cause is chained (`__cause__`)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"database unavailable: {type(cause).__name__}: {cause}")


# SQLite's messages for "someone else holds it" and "cannot reach the file": transient
# or operational, never the request's fault.
_SQLITE_UNAVAILABLE = ("locked", "busy", "unable to open", "disk I/O error")


def _sqlite_unavailable(error: sqlite3.OperationalError) -> bool:
    text = str(error)
    return any(part in text for part in _SQLITE_UNAVAILABLE)


def _postgres_unavailable(error: BaseException) -> bool:
    """asyncpg's errors of the connection rather than of the statement: the server
    refuses connections (starting up, shutting down: 57P03, too many: 53300), ended ours
    (57P01-57P02 admin/crash shutdown, class 08), or the socket broke (OSError,
    including "Connect call failed" and resets; TimeoutError while connecting)."""
    if isinstance(error, OSError | TimeoutError):
        return True
    asyncpg = sys.modules.get("asyncpg")
    if asyncpg is None:
        return False
    exceptions = asyncpg.exceptions
    if isinstance(
        error,
        exceptions.PostgresConnectionError
        | exceptions.CannotConnectNowError
        | exceptions.AdminShutdownError
        | exceptions.CrashShutdownError
        | exceptions.TooManyConnectionsError
        | exceptions.ConnectionDoesNotExistError,
    ):
        return True
    # A connection the server closed, used before the pool noticed; or caught by the
    # closing mid-exchange (its protocol state is then left inconsistent).
    if isinstance(error, exceptions.InterfaceError) and "closed" in str(error):
        return True
    return isinstance(error, exceptions.InternalClientError) and "cannot switch" in str(error)


class Connection(ABC):
    """A connection inside a transaction (or the autocommit read connection)."""

    dialect: Dialect

    @abstractmethod
    async def fetch_all(self, statement: Statement, params: Params = None) -> list[Row]: ...

    @abstractmethod
    async def fetch_one(self, statement: Statement, params: Params = None) -> Row | None: ...

    async def fetch_value(self, statement: Statement, params: Params = None) -> Any:
        row = await self.fetch_one(statement, params)
        return None if row is None else row[0]

    @abstractmethod
    async def execute(self, statement: Statement, params: Params = None) -> int:
        """Run a statement; returns the number of rows it changed."""

    @abstractmethod
    async def execute_many(self, sql: str, rows: Sequence[Mapping[str, Any]]) -> None: ...


class Database(ABC):
    dialect: Dialect

    @abstractmethod
    async def connect(self) -> None: ...

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    def transaction(self) -> contextlib.AbstractAsyncContextManager[Connection]:
        """A write transaction: committed when the block ends, rolled back on error."""

    @property
    @abstractmethod
    def reader(self) -> Connection:
        """For reads outside a transaction (each statement sees committed data)."""

    async def fetch_all(self, statement: Statement, params: Params = None) -> list[Row]:
        return await self.reader.fetch_all(statement, params)

    async def fetch_one(self, statement: Statement, params: Params = None) -> Row | None:
        return await self.reader.fetch_one(statement, params)

    async def fetch_value(self, statement: Statement, params: Params = None) -> Any:
        return await self.reader.fetch_value(statement, params)

    async def execute(self, statement: Statement, params: Params = None) -> int:
        async with self.transaction() as conn:
            return await conn.execute(statement, params)

    def data_version(self, tables: frozenset[str] | None = None) -> int | None:
        """A number that changes whenever anything (or one of `tables`, where the
        backend can tell) is committed to the database, for
        caches of read results to check that they are still current; None where no
        signal is available now (cache nothing then). SQLite: its own data_version;
        PostgreSQL: commit notifications (PostgresDatabase.data_version)."""
        return None

    @abstractmethod
    def on_commit(self, tables: frozenset[str], wake: Callable[[], None]) -> Callable[[], None]:
        """Call `wake` (on the event loop, cheaply: set an asyncio.Event) after each
        commit that may have written one of `tables`, so a worker waits for work instead
        of polling for it. Returns the function that stops it. Which commits are seen:
        `sees_other_processes`."""

    @property
    def sees_other_processes(self) -> bool:
        """Whether `on_commit` also hears other processes' commits now (PostgreSQL while
        its listener is up). Where it does not, a worker must keep polling for them."""
        return False


# --------------------------------------------------------------------------- SQLite


class SqliteConnection(Connection):
    dialect: Dialect = "sqlite"

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw
        # Inside a transaction: the tables its statements may write (`written_tables`);
        # the commit counts them only if it changed a row.
        self.written: set[str] | None = None

    def _compiled(self, statement: Statement, params: Params) -> tuple[str, Any]:
        sql, args = _compile(statement, params, "sqlite")
        self._note(sql)
        return sql, args or {}

    def _note(self, sql: str) -> None:
        if self.written is not None:
            self.written.update(written_tables(sql))

    # try/except costs nothing until something is raised (Python 3.11): the hot reads
    # stay as fast.
    async def fetch_all(self, statement: Statement, params: Params = None) -> list[Row]:
        sql, args = self._compiled(statement, params)
        try:
            return self.raw.execute(sql, args).fetchall()
        except sqlite3.OperationalError as error:
            if _sqlite_unavailable(error):
                raise DatabaseUnavailable(error) from error
            raise

    async def fetch_one(self, statement: Statement, params: Params = None) -> Row | None:
        sql, args = self._compiled(statement, params)
        try:
            return self.raw.execute(sql, args).fetchone()  # type: ignore[no-any-return]
        except sqlite3.OperationalError as error:
            if _sqlite_unavailable(error):
                raise DatabaseUnavailable(error) from error
            raise

    async def execute(self, statement: Statement, params: Params = None) -> int:
        sql, args = self._compiled(statement, params)
        try:
            return self.raw.execute(sql, args).rowcount
        except sqlite3.OperationalError as error:
            if _sqlite_unavailable(error):
                raise DatabaseUnavailable(error) from error
            raise

    async def execute_many(self, sql: str, rows: Sequence[Mapping[str, Any]]) -> None:
        self._note(sql)
        try:
            self.raw.executemany(sql, rows)
        except sqlite3.OperationalError as error:
            if _sqlite_unavailable(error):
                raise DatabaseUnavailable(error) from error
            raise


def open_sqlite(path: str) -> sqlite3.Connection:
    raw = sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, cached_statements=512
    )
    raw.row_factory = sqlite3.Row
    raw.execute("PRAGMA journal_mode=WAL")
    raw.execute("PRAGMA synchronous=NORMAL")
    raw.execute("PRAGMA foreign_keys=ON")
    # Zero: waiting for another process's write lock happens in SqliteDatabase's
    # retry loop, which yields to the event loop instead of blocking it.
    raw.execute("PRAGMA busy_timeout=0")
    return raw


# How long a reading of SQLite's data_version stands for another process's commits.
VERSION_REUSE_SECONDS = 0.001
# Commits by this process per database file and table (ALL_TABLES: commits whose tables
# are not known; ANY_COMMIT: every commit), for every SqliteDatabase on the file (two
# apps in one process, as tests run replicas) to see at once.
_COMMITS: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
ANY_COMMIT = ""
# `on_commit` callbacks per database file, for the same reason: (tables, callback).
_WAKES: dict[str, list[tuple[frozenset[str], Callable[[], None]]]] = {}


def _call_each(wakes: Iterable[Callable[[], None]]) -> None:
    for wake in tuple(wakes):  # a callback may stop itself
        try:
            wake()
        except Exception:  # one broken waiter must not fail the commit that woke it
            log.exception("commit callback failed")


class SqliteDatabase(Database):
    dialect: Dialect = "sqlite"

    def __init__(self, path: str, *, lock_timeout: float = 10.0) -> None:
        self.path = path
        self.lock_timeout = lock_timeout
        self._write_lock = asyncio.Lock()
        self._writer: SqliteConnection | None = None
        self._reader: SqliteConnection | None = None
        # Other connections' commits seen (data_version), and when to look again.
        self._others = 0
        self._others_seen: int | None = None
        self._version_until = 0.0
        # Tables -> (this process's commits, their commits to those tables) when summed.
        self._summed: dict[frozenset[str], tuple[int, int]] = {}

    async def connect(self) -> None:
        if self.path != ":memory:":
            # 0700 / 0600: the database holds every token's keyed hash.
            private_directory(Path(self.path).parent)
            private_file(self.path)
        self._writer = SqliteConnection(open_sqlite(self.path))
        reader = open_sqlite(self.path)
        # Readers may wait briefly for a WAL recovery or checkpoint by another process.
        reader.execute("PRAGMA busy_timeout=2000")
        self._reader = SqliteConnection(reader)

    async def close(self) -> None:
        for conn in (self._writer, self._reader):
            if conn is not None:
                conn.raw.close()
        self._writer = self._reader = None

    @property
    def reader(self) -> Connection:
        if self._reader is None:
            raise RuntimeError("database is not connected")
        return self._reader

    def data_version(self, tables: frozenset[str] | None = None) -> int | None:
        # Two parts that only grow, summed. This process's commits, counted per table at
        # each commit that changed a row (`transaction`): seen at once, and a commit to
        # the outbox leaves the pull's caches of tokens and vehicles alone. And other
        # connections' commits (other processes, the CLI, another Database on the file),
        # which cannot be told apart by table: SQLite's data_version of the write
        # connection changes with every commit by any other connection (this object's
        # reader never writes). Reading it starts a read transaction (~2 µs), and a pull
        # asks twice (token, vehicle), so a reading is reused for VERSION_REUSE_SECONDS:
        # only another connection's commit can go unseen, for at most that long.
        if self._writer is None:
            raise RuntimeError("database is not connected")
        now = time.monotonic()
        if now >= self._version_until:
            seen = self._writer.raw.execute("PRAGMA data_version").fetchone()[0]
            if seen != self._others_seen:
                self._others_seen = seen
                self._others += 1
            self._version_until = now + VERSION_REUSE_SECONDS
        counts = _COMMITS[self.path]
        commits = counts[ANY_COMMIT]
        if tables is None:
            return self._others + commits
        # The sum per set of tables, kept until this process commits again (a pull asks
        # for the same two or three sets each time).
        summed = self._summed.get(tables)
        if summed is None or summed[0] != commits:
            own = counts[ALL_TABLES] + sum(counts[table] for table in tables)
            summed = self._summed[tables] = (commits, own)
        return self._others + summed[1]

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        if self._writer is None:
            raise RuntimeError("database is not connected")
        async with self._write_lock:
            writer = self._writer
            await self._begin_immediate(writer.raw)
            changes = writer.raw.total_changes
            written: set[str] = set()
            writer.written = written
            try:
                yield writer
            except BaseException:
                writer.raw.execute("ROLLBACK")
                raise
            else:
                writer.raw.execute("COMMIT")
                if writer.raw.total_changes == changes:
                    # Nothing written (a worker's claim that found no work): the caches
                    # stay valid and no waiter has anything new to see.
                    return
                self._committed(written or {ALL_TABLES})
            finally:
                writer.written = None

    def _committed(self, tables: set[str]) -> None:
        counts = _COMMITS[self.path]
        counts[ANY_COMMIT] += 1
        for table in tables:
            counts[table] += 1
        wakes = _WAKES.get(self.path)
        if wakes:
            everything = ALL_TABLES in tables
            _call_each(
                wake for watched, wake in wakes if everything or not watched.isdisjoint(tables)
            )

    def on_commit(self, tables: frozenset[str], wake: Callable[[], None]) -> Callable[[], None]:
        # Every commit of this process on the file that wrote one of `tables`; other
        # processes' commits are not heard: sees_other_processes is False.
        wakes = _WAKES.setdefault(self.path, [])
        entry = (tables, wake)
        wakes.append(entry)

        def stop() -> None:
            with contextlib.suppress(ValueError):
                wakes.remove(entry)

        return stop

    async def _begin_immediate(self, raw: sqlite3.Connection) -> None:
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.001
        while True:
            try:
                raw.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error):
                    raise
                if time.monotonic() > deadline:
                    raise DatabaseUnavailable(error) from error
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.05)


# ----------------------------------------------------------------------- PostgreSQL


# The table after each writing keyword (INSERT INTO t, UPDATE t, DELETE FROM t, also in
# CTEs); UPDATE in `ON CONFLICT ... DO UPDATE SET` and `FOR UPDATE` names no table.
_WRITES = re.compile(r"\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+\"?([A-Za-z_][\w.]*)", re.I)
_NOT_TABLES = frozenset({"set", "skip", "nowait", "of"})
# Anything that may write without naming its table that way counts as writing all.
_OTHER_WRITES = re.compile(r"\b(?:TRUNCATE|ALTER|DROP|CREATE|COPY|MERGE)\b", re.I)
ALL_TABLES = "*"


@lru_cache(maxsize=2048)
def written_tables(sql: str) -> frozenset[str]:
    """The tables a statement may write, for the per-table commit counts of both
    backends (`data_version`, `on_commit`). A plain read: none. A write whose table
    cannot be read here: all."""
    if _OTHER_WRITES.search(sql):
        return frozenset({ALL_TABLES})
    found = {
        name.rsplit(".", 1)[-1].lower()
        for name in _WRITES.findall(sql)
        if name.lower() not in _NOT_TABLES
    }
    locking = re.sub(r"\b(?:FOR|DO)\s+UPDATE\b", "", sql, flags=re.I)  # names no table
    if not found and re.search(r"\b(?:INSERT|UPDATE|DELETE)\b", locking, re.I):
        return frozenset({ALL_TABLES})
    return frozenset(found)


@lru_cache(maxsize=2048)
def _returns_rows(sql: str) -> bool:
    """Whether a write returns its rows (RETURNING): then no row returned, no row written."""
    return re.search(r"\bRETURNING\b", sql, re.I) is not None


@lru_cache(maxsize=2048)
def _counts_its_writes(sql: str) -> bool:
    """Whether a count of 0 rows (the command tag, or no RETURNING row) means the
    statement wrote nothing: so for a plain INSERT/UPDATE/DELETE; not for one with a
    WITH clause, whose other parts may have written what the count leaves out."""
    return not sql.lstrip().upper().startswith("WITH")


class PostgresConnection(Connection):
    dialect: Dialect = "postgresql"

    def __init__(self, raw: Any, written: set[str] | None = None) -> None:
        self.raw = raw  # an asyncpg Connection or Pool: both have fetch/execute
        # Inside a transaction: the tables its statements wrote (`written_tables`).
        self.written = written

    def _wrote(self, sql: str, rows: int | None) -> None:
        """Note the tables `sql` wrote. `rows`: how many rows it changed, when known; a
        statement that changed none (a worker's claim that found no work) wrote nothing,
        so its transaction notifies nobody."""
        if self.written is None or (rows == 0 and _counts_its_writes(sql)):
            return
        self.written.update(written_tables(sql))

    def _fetched(self, sql: str, returned: int) -> None:
        """`sql` returned `returned` rows: with RETURNING, the rows it wrote."""
        if self.written is not None:
            self._wrote(sql, returned if _returns_rows(sql) else None)

    def _args(self, statement: Statement, params: Params) -> tuple[str, str, list[Any]]:
        """The compiled SQL, the query asyncpg runs and its arguments."""
        sql, named = _compile(statement, params, "postgresql")
        query, names = _to_dollar_params(sql)
        if not names:
            return sql, query, []
        if named is None:
            raise ValueError(f"missing parameters for query: {query[:80]}")
        return sql, query, [named[name] for name in names]

    async def fetch_all(self, statement: Statement, params: Params = None) -> list[Row]:
        sql, query, args = self._args(statement, params)
        try:
            rows: list[Row] = await self.raw.fetch(query, *args)
        except Exception as error:
            if _postgres_unavailable(error):
                raise DatabaseUnavailable(error) from error
            raise
        self._fetched(sql, len(rows))
        return rows

    async def fetch_one(self, statement: Statement, params: Params = None) -> Row | None:
        sql, query, args = self._args(statement, params)
        try:
            row: Row | None = await self.raw.fetchrow(query, *args)
        except Exception as error:
            if _postgres_unavailable(error):
                raise DatabaseUnavailable(error) from error
            raise
        self._fetched(sql, 0 if row is None else 1)
        return row

    async def execute(self, statement: Statement, params: Params = None) -> int:
        sql, query, args = self._args(statement, params)
        try:
            status: str = await self.raw.execute(query, *args)
        except Exception as error:
            if _postgres_unavailable(error):
                raise DatabaseUnavailable(error) from error
            raise
        # asyncpg returns the command tag, e.g. "UPDATE 3" or "INSERT 0 1".
        last = status.rsplit(" ", 1)[-1]
        rows = int(last) if last.isdigit() else None
        self._wrote(sql, rows)
        return rows or 0

    async def execute_many(self, sql: str, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        self._wrote(sql, None)
        query, names = _to_dollar_params(sql)
        try:
            await self.raw.executemany(query, [[row[name] for name in names] for row in rows])
        except Exception as error:
            if _postgres_unavailable(error):
                raise DatabaseUnavailable(error) from error
            raise


class PostgresDatabase(Database):
    dialect: Dialect = "postgresql"

    def __init__(self, url: str, *, schema: str | None = None, pool_size: int = 10) -> None:
        self.url = asyncpg_dsn(url)
        self.schema = schema
        self.pool_size = pool_size
        self._pool: Any = None
        self._reader: PostgresConnection | None = None
        # data_version (see there): commits of this object and notifications of every
        # process's commits on one channel per schema.
        self.channel = f"autoport_changes_{schema or 'public'}"[:63]
        self._version = 0  # every commit
        self._table_versions: collections.Counter[str] = collections.Counter()
        self._listener: Any = None
        self._listening = False
        self._relisten: asyncio.Task[None] | None = None
        # on_commit: (tables, callback), called from _changed.
        self._wakes: list[tuple[frozenset[str], Callable[[], None]]] = []

    async def connect(self) -> None:
        import asyncpg  # imported lazily: the embedded default never needs it

        self._pool = await asyncpg.create_pool(
            self.url,
            min_size=1,
            max_size=self.pool_size,
            server_settings=self._server_settings(),
            # No reset query on every release (asyncpg's default: advisory unlock, CLOSE
            # ALL, UNLISTEN, RESET ALL: a round trip per read on the pool, 7 % of a
            # pull). autoport keeps no session state on pooled connections.
            reset=_keep_session,
        )
        self._reader = PostgresConnection(self._pool)
        try:
            await self._listen()
        except Exception as error:  # the caches stay off until the listener is back
            log.warning("data_version listener unavailable", error=str(error))
            self._relisten = asyncio.ensure_future(self._listen_again())

    def _server_settings(self) -> dict[str, str]:
        settings = {"application_name": "autoport"}
        if self.schema:
            settings["search_path"] = self.schema
        return settings

    async def _listen(self) -> None:
        import asyncpg

        named = self._server_settings() | {"application_name": _listener_name()}
        listener = await asyncpg.connect(self.url, server_settings=named)
        # Present on the schema for as long as this listener lives (a lost listener is
        # taken again by _listen_again, and the caches start over then): `autoport
        # restore` takes the lock exclusively, so it refuses while any process holds it,
        # and a process (re)connecting during a restore waits here, caches off, until
        # the restore is over.
        if not await listener.fetchval(
            "SELECT pg_try_advisory_lock_shared($1)", presence_lock_key(self.schema)
        ):
            await listener.close()
            raise RuntimeError("a restore (`autoport restore`) holds the database schema")
        await listener.add_listener(self.channel, self._notified)
        listener.add_termination_listener(self._lost)
        self._listener = listener
        self._version += 1  # whatever was committed while nobody listened
        self._listening = True
        _call_each(wake for _, wake in self._wakes)  # the same: look again

    def _notified(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        self._changed(payload.split(",") if payload else (ALL_TABLES,))

    def _changed(self, tables: Iterable[str]) -> None:
        self._version += 1
        written = frozenset(tables)
        for table in written:
            self._table_versions[table] += 1
        if self._wakes:
            everything = ALL_TABLES in written
            _call_each(
                wake
                for watched, wake in self._wakes
                if everything or not watched.isdisjoint(written)
            )

    def on_commit(self, tables: frozenset[str], wake: Callable[[], None]) -> Callable[[], None]:
        # This object's commits at once; every process's (this one's included, again) when
        # their notification arrives, while the listener is up (sees_other_processes).
        entry = (tables, wake)
        self._wakes.append(entry)

        def stop() -> None:
            with contextlib.suppress(ValueError):
                self._wakes.remove(entry)

        return stop

    @property
    def sees_other_processes(self) -> bool:
        return self._listening

    def _lost(self, *_: Any) -> None:
        # Commits may now go unseen: no cached read is trusted until listening again.
        self._listening = False
        self._version += 1
        _call_each(wake for _, wake in self._wakes)  # waiters go back to polling now
        if self._pool is not None and (self._relisten is None or self._relisten.done()):
            self._relisten = asyncio.ensure_future(self._listen_again())

    async def _listen_again(self) -> None:
        while self._pool is not None and not self._listening:
            await asyncio.sleep(1.0)
            try:
                await self._listen()
            except Exception as error:
                log.warning("data_version listener unavailable", error=str(error))

    def data_version(self, tables: frozenset[str] | None = None) -> int | None:
        # Changes with every commit through any autoport process on this schema that
        # writes one of `tables` (any commit when None): each write transaction sends a
        # notification naming the tables it wrote at its commit (`transaction`), and a
        # dedicated connection listens for them. A commit of this object counts at
        # once; another process's once its notification arrives (LISTEN/NOTIFY, about a
        # millisecond on one host). While the listener is down: None (cache nothing).
        # Writes made outside autoport (psql, migrations) notify nobody.
        if not self._listening:
            return None
        if tables is None:
            return self._version
        # Counters only grow, so the sum changes whenever one of them does.
        counts = self._table_versions
        return counts[ALL_TABLES] + sum(counts[table] for table in tables)

    async def close(self) -> None:
        pool, listener = self._pool, self._listener
        self._pool = self._reader = self._listener = None
        self._listening = False
        if self._relisten is not None:
            self._relisten.cancel()
        if listener is not None:
            with contextlib.suppress(Exception):
                listener.remove_termination_listener(self._lost)
                await listener.close()
        if pool is not None:
            await pool.close()

    @property
    def reader(self) -> Connection:
        if self._reader is None:
            raise RuntimeError("database is not connected")
        return self._reader

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        if self._pool is None:
            raise RuntimeError("database is not connected")
        try:
            written: set[str] = set()
            async with self._pool.acquire() as raw:
                async with raw.transaction():
                    yield PostgresConnection(raw, written)
                    if written:
                        # Delivered at the commit, to every process (data_version).
                        payload = ",".join(sorted(written))
                        await raw.execute("SELECT pg_notify($1, $2)", self.channel, payload)
                if written:  # committed: this process's caches see it at once
                    self._changed(written)
        except DatabaseUnavailable:
            raise
        except Exception as error:
            # Also the ROLLBACK that fails on a connection the server cut, which would
            # otherwise replace the statement's own DatabaseUnavailable.
            if not _postgres_unavailable(error):
                raise
            raise DatabaseUnavailable(error) from error


async def _keep_session(connection: Any) -> None:
    return None


def presence_lock_key(schema: str | None) -> int:
    """The PostgreSQL advisory lock (a bigint) of autoport's processes on `schema`:
    every connected PostgresDatabase holds it shared on its listener connection;
    `autoport restore` holds it exclusively (autoport.backup.service)."""
    digest = hashlib.sha256(f"autoport presence:{schema or 'public'}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _listener_name() -> str:
    """The listener's application_name: which host and process holds the schema (what
    a refused restore names)."""
    return f"autoport {socket.gethostname()} pid {os.getpid()}"[:63]


def asyncpg_dsn(url: str) -> str:
    """asyncpg takes postgresql:// URLs; accept the spellings people paste."""
    for prefix in ("postgresql+asyncpg://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix) :]
    return url


def sqlite_path(url: str) -> str:
    """`sqlite:///relative.db`, `sqlite:////abs/path.db` or `sqlite:///:memory:`."""
    if not url.startswith("sqlite:///"):
        raise ValueError("a SQLite URL looks like sqlite:///relative.db or sqlite:////abs.db")
    return url[len("sqlite:///") :] or ":memory:"


def create_database(url: str, *, schema: str | None = None, pool_size: int = 10) -> Database:
    if url.startswith("sqlite:"):
        return SqliteDatabase(sqlite_path(url))
    return PostgresDatabase(url, schema=schema, pool_size=pool_size)
