"""Group commit: work sharing one transaction stays isolated (savepoints), results and
errors reach the right caller, and single-use rules hold inside one batch."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from autoport.kit.db import Connection, Database
from autoport.oauth.group_commit import GroupCommit
from tests.factories import AppCredentials, vehicle_token
from tests.oauth.conftest import token_request


class Boom(Exception):
    pass


async def test_a_failing_piece_rolls_back_only_its_own_writes(db: Database) -> None:
    group = GroupCommit(db)

    async def write(name: str, fail: bool) -> str:
        async def work(conn: Connection) -> str:
            await conn.execute(
                "INSERT INTO accounts (id, environment, name, created_at) "
                "VALUES (:id, 'production', :id, 0)",
                {"id": name},
            )
            if fail:
                raise Boom(name)
            return name

        return await group.run(work)

    results = await asyncio.gather(
        *(write(f"acct-{i}", fail=i % 3 == 0) for i in range(9)), return_exceptions=True
    )
    for i, result in enumerate(results):
        if i % 3 == 0:
            assert isinstance(result, Boom) and str(result) == f"acct-{i}"
        else:
            assert result == f"acct-{i}"
    stored = {row["id"] for row in await db.fetch_all("SELECT id FROM accounts")}
    assert stored == {f"acct-{i}" for i in range(9) if i % 3}


async def test_one_refresh_token_in_one_batch_gives_one_pair(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials
) -> None:
    token = await vehicle_token(client, db, creds, vin="1HGCM82633A004352")
    responses = await asyncio.gather(
        *(
            token_request(
                client, creds, grant_type="refresh_token", refresh_token=token.refresh_token
            )
            for _ in range(6)
        )
    )
    assert {r.status_code for r in responses} == {200}
    assert len({r.json()["refresh_token"] for r in responses}) == 1
    minted = await db.fetch_value(
        "SELECT COUNT(*) FROM oauth_tokens WHERE authorization_id = :id AND kind = 'refresh'",
        {"id": token.authorization_id},
    )
    assert minted == 2


@pytest.mark.parametrize("count", [1, 5])
async def test_many_client_tokens_at_once(
    client: httpx.AsyncClient, creds: AppCredentials, count: int
) -> None:
    responses = await asyncio.gather(
        *(token_request(client, creds, grant_type="client_credentials") for _ in range(count))
    )
    assert [r.status_code for r in responses] == [200] * count
