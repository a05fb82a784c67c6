"""SQL of accounts, applications, client secrets and keys. Every read is scoped by
environment, so a sandbox id never finds a production row."""

from __future__ import annotations

from typing import Any

from autoport.apps.schemas import Account, Application, ClientKey
from autoport.kit.db import Connection, Row
from autoport.kit.environments import Environment

_APP_COLUMNS = (
    "id, environment, account_id, client_id, name, client_type, redirect_uris, properties, "
    "brands, created_at, disabled_at, url_scheme, commands, company, privacy_url"
)


# Client authentication (autoport.oauth.client_auth), one query each: the application
# with its secrets still in force, or with its registered keys.
_A_COLUMNS = ", ".join(f"a.{column.strip()}" for column in _APP_COLUMNS.split(","))
# Every secret with its end, whatever the time: the caller keeps the result while the
# tables are unchanged and picks the secrets in force when it uses it.
_CLIENT_WITH_SECRETS = f"""
SELECT {_A_COLUMNS}, s.secret_hash, s.expires_at AS secret_expires_at
FROM applications a
LEFT JOIN client_secrets s ON s.application_id = a.id
WHERE a.client_id = :client_id AND a.environment = :environment
"""  # noqa: S608 - fixed column list
_KEYS_BY_KEY_ID = f"""
SELECT {_A_COLUMNS}, k.id AS key_id, k.public_jwk
FROM client_keys k JOIN applications a ON a.id = k.application_id
WHERE k.id = :iss AND k.environment = :environment AND k.revoked_at IS NULL
"""  # noqa: S608 - fixed column list
_KEYS_BY_CLIENT_ID = f"""
SELECT {_A_COLUMNS}, k.id AS key_id, k.public_jwk
FROM applications a JOIN client_keys k ON k.application_id = a.id
WHERE a.client_id = :iss AND a.environment = :environment AND k.revoked_at IS NULL
ORDER BY k.created_at DESC
"""  # noqa: S608 - fixed column list


async def get_client_with_secrets(
    conn: Connection, environment: Environment, client_id: str
) -> tuple[Application, list[tuple[str, int | None]]] | None:
    """The application of `client_id` and each of its secrets' (hash, expires_at), the
    expired ones included."""
    rows = await conn.fetch_all(
        _CLIENT_WITH_SECRETS, {"client_id": client_id, "environment": str(environment)}
    )
    if not rows:
        return None
    secrets = [
        (row["secret_hash"], row["secret_expires_at"])
        for row in rows
        if row["secret_hash"] is not None
    ]
    return Application.from_row(rows[0]), secrets


async def list_client_keys(
    conn: Connection,
    environment: Environment,
    *,
    key_id: str | None = None,
    client_id: str | None = None,
) -> list[tuple[Application, str, str]]:
    """(application, key id, public JWK) of the registered key `key_id`, or of every key of
    the client `client_id` (newest first)."""
    sql, iss = (_KEYS_BY_KEY_ID, key_id) if key_id is not None else (_KEYS_BY_CLIENT_ID, client_id)
    rows = await conn.fetch_all(sql, {"iss": iss, "environment": str(environment)})
    return [(Application.from_row(row), row["key_id"], row["public_jwk"]) for row in rows]


async def create_account(conn: Connection, account: Account) -> None:
    await conn.execute(
        "INSERT INTO accounts (id, environment, name, created_at) "
        "VALUES (:id, :environment, :name, :created_at)",
        {
            "id": account.id,
            "environment": str(account.environment),
            "name": account.name,
            "created_at": account.created_at,
        },
    )


async def get_account(
    conn: Connection, environment: Environment, account_id: str
) -> Account | None:
    row = await conn.fetch_one(
        "SELECT id, environment, name, created_at FROM accounts "
        "WHERE id = :id AND environment = :environment",
        {"id": account_id, "environment": str(environment)},
    )
    return None if row is None else Account.from_row(row)


async def get_account_by_name(
    conn: Connection, environment: Environment, name: str
) -> Account | None:
    """The environment's oldest account of that name (names are not unique)."""
    row = await conn.fetch_one(
        "SELECT id, environment, name, created_at FROM accounts "
        "WHERE environment = :environment AND name = :name ORDER BY created_at, id LIMIT 1",
        {"environment": str(environment), "name": name},
    )
    return None if row is None else Account.from_row(row)


async def list_accounts(conn: Connection, environment: Environment) -> list[Account]:
    rows = await conn.fetch_all(
        "SELECT id, environment, name, created_at FROM accounts "
        "WHERE environment = :environment ORDER BY created_at, id",
        {"environment": str(environment)},
    )
    return [Account.from_row(row) for row in rows]


async def create_application(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(
        f"INSERT INTO applications ({_APP_COLUMNS}) VALUES (:id, :environment, :account_id, "  # noqa: S608
        ":client_id, :name, :client_type, :redirect_uris, :properties, :brands, :created_at, "
        ":disabled_at, :url_scheme, :commands, :company, :privacy_url)",
        values,
    )


async def get_application(
    conn: Connection, environment: Environment, app_id: str
) -> Application | None:
    row = await conn.fetch_one(
        f"SELECT {_APP_COLUMNS} FROM applications WHERE id = :id AND environment = :environment",  # noqa: S608
        {"id": app_id, "environment": str(environment)},
    )
    return None if row is None else Application.from_row(row)


async def get_application_by_client_id(
    conn: Connection, environment: Environment, client_id: str
) -> Application | None:
    row = await conn.fetch_one(
        f"SELECT {_APP_COLUMNS} FROM applications "  # noqa: S608
        "WHERE client_id = :client_id AND environment = :environment",
        {"client_id": client_id, "environment": str(environment)},
    )
    return None if row is None else Application.from_row(row)


async def list_applications(
    conn: Connection, environment: Environment, account_id: str | None = None
) -> list[Application]:
    sql = f"SELECT {_APP_COLUMNS} FROM applications WHERE environment = :environment"  # noqa: S608
    params: dict[str, Any] = {"environment": str(environment)}
    if account_id is not None:
        sql += " AND account_id = :account_id"
        params["account_id"] = account_id
    rows = await conn.fetch_all(sql + " ORDER BY created_at, id", params)
    return [Application.from_row(row) for row in rows]


async def update_application(
    conn: Connection, environment: Environment, app_id: str, values: dict[str, Any]
) -> None:
    # Column names come from a fixed allow-list in the service, never from input.
    assignments = ", ".join(f"{name} = :{name}" for name in values)
    await conn.execute(
        f"UPDATE applications SET {assignments} WHERE id = :id AND environment = :environment",  # noqa: S608
        {**values, "id": app_id, "environment": str(environment)},
    )


async def create_secret(
    conn: Connection,
    *,
    secret_id: str,
    environment: Environment,
    application_id: str,
    secret_hash: str,
    now_us: int,
) -> None:
    await conn.execute(
        "INSERT INTO client_secrets (id, environment, application_id, secret_hash, created_at, "
        "expires_at) VALUES (:id, :environment, :application_id, :secret_hash, :now, NULL)",
        {
            "id": secret_id,
            "environment": str(environment),
            "application_id": application_id,
            "secret_hash": secret_hash,
            "now": now_us,
        },
    )


async def expire_open_secrets(conn: Connection, application_id: str, expires_at: int) -> int:
    """Give every secret without an end the end `expires_at` (rotation's overlap)."""
    return await conn.execute(
        "UPDATE client_secrets SET expires_at = :expires_at "
        "WHERE application_id = :application_id "
        "AND (expires_at IS NULL OR expires_at > :expires_at)",
        {"application_id": application_id, "expires_at": expires_at},
    )


async def list_secrets(conn: Connection, application_id: str) -> list[Row]:
    return await conn.fetch_all(
        "SELECT id, created_at, expires_at FROM client_secrets "
        "WHERE application_id = :application_id ORDER BY created_at, id",
        {"application_id": application_id},
    )


async def create_key(conn: Connection, key: ClientKey, environment: Environment, jwk: str) -> None:
    await conn.execute(
        "INSERT INTO client_keys (id, environment, application_id, public_jwk, created_at, "
        "revoked_at) VALUES (:id, :environment, :application_id, :jwk, :created_at, NULL)",
        {
            "id": key.id,
            "environment": str(environment),
            "application_id": key.application_id,
            "jwk": jwk,
            "created_at": key.created_at,
        },
    )


async def list_keys(conn: Connection, application_id: str) -> list[ClientKey]:
    rows = await conn.fetch_all(
        "SELECT id, application_id, public_jwk, created_at, revoked_at FROM client_keys "
        "WHERE application_id = :application_id ORDER BY created_at, id",
        {"application_id": application_id},
    )
    return [ClientKey.from_row(row) for row in rows]


async def revoke_key(conn: Connection, application_id: str, key_id: str, now_us: int) -> int:
    return await conn.execute(
        "UPDATE client_keys SET revoked_at = :now "
        "WHERE id = :id AND application_id = :application_id AND revoked_at IS NULL",
        {"id": key_id, "application_id": application_id, "now": now_us},
    )


# ------------------------------------------------ the console's paged lists


async def list_accounts_page(
    conn: Connection, environment: Environment, *, limit: int, after: tuple[str, str] | None
) -> list[Account]:
    """Accounts by name (then id), `limit` after the cursor (the console's list)."""
    sql = "SELECT id, environment, name, created_at FROM accounts WHERE environment = :environment"
    params: dict[str, Any] = {"environment": str(environment), "limit": limit}
    if after is not None:
        sql += " AND (name > :name OR (name = :name AND id > :id))"
        params["name"], params["id"] = after
    rows = await conn.fetch_all(sql + " ORDER BY name, id LIMIT :limit", params)
    return [Account.from_row(row) for row in rows]


async def list_applications_of_account(
    conn: Connection,
    environment: Environment,
    account_id: str,
    *,
    limit: int,
    after: tuple[int, str] | None,
    search: str | None = None,
) -> list[Application]:
    """The account's applications, newest first, `limit` after the cursor."""
    sql = (
        f"SELECT {_APP_COLUMNS} FROM applications "  # noqa: S608
        "WHERE environment = :environment AND account_id = :account_id"
    )
    params: dict[str, Any] = {
        "environment": str(environment),
        "account_id": account_id,
        "limit": limit,
    }
    if search:
        sql += " AND (LOWER(name) LIKE :search ESCAPE '!' OR id = :exact)"
        escaped = search.lower().replace("!", "!!").replace("%", "!%").replace("_", "!_")
        params["search"] = f"%{escaped}%"
        params["exact"] = search.upper()
    if after is not None:
        sql += " AND (created_at < :at OR (created_at = :at AND id < :id))"
        params["at"], params["id"] = after
    rows = await conn.fetch_all(sql + " ORDER BY created_at DESC, id DESC LIMIT :limit", params)
    return [Application.from_row(row) for row in rows]


async def get_application_of_account(
    conn: Connection, environment: Environment, account_id: str, app_id: str
) -> Application | None:
    row = await conn.fetch_one(
        f"SELECT {_APP_COLUMNS} FROM applications WHERE id = :id "  # noqa: S608
        "AND environment = :environment AND account_id = :account_id",
        {"id": app_id, "environment": str(environment), "account_id": account_id},
    )
    return None if row is None else Application.from_row(row)
