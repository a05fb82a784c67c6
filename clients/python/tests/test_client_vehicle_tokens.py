"""Owner grants: a code from the real consent pages, exchanged for a `VehicleToken`; the
session refreshes with rotation and hands every new token to the storage callback; two
threads or coroutines needing a refresh at once spend the refresh token once; two
processes holding the same token both succeed through the server's grace window."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from urllib.parse import quote, urlencode

import pytest
from conftest import REDIRECT_URI, LiveServer, consent_callback

from autoport_client import (
    AsyncClient,
    AuthenticationError,
    Client,
    ConsentError,
    InvalidGrant,
    PermissionDenied,
    VehicleToken,
    _core,
    pkce_pair,
)


def approved(server: LiveServer, client: Client) -> tuple[str, str]:
    """The owner's return to the demo application after approving (state "st-1"), and
    the PKCE verifier of its request."""
    assert server.demo is not None
    verifier, challenge = pkce_pair()
    callback = consent_callback(
        server, client, server.demo.vins["driving"], app_id=server.demo.application_id,
        challenge=challenge,
    )  # fmt: skip
    return callback, verifier


def grant(server: LiveServer, client: Client) -> VehicleToken:
    callback, verifier = approved(server, client)
    return client.exchange_callback(callback, REDIRECT_URI, state="st-1", code_verifier=verifier)


def stale(token: VehicleToken) -> VehicleToken:
    """The same grant, as if its access token were about to expire."""
    return dataclasses.replace(token, expires_at=0)


def test_exchange_read_refresh_and_revoke(client: Client, server: LiveServer) -> None:
    assert server.demo is not None
    vin = server.demo.vins["driving"]
    token = grant(server, client)
    assert token.status == "approved" and token.authorization_id
    assert token.refresh_token.startswith("ap_rt_")
    assert VehicleToken.from_dict(token.to_dict()) == token  # what an app persists

    saved: list[VehicleToken] = []
    session = client.vehicle(token, on_refresh=saved.append)
    info = session.vehicleinfo()
    assert info.vin == vin and info.sub
    data = session.get_vehicle_data(vin)
    assert isinstance(data.charging.battery_level.value, float)
    assert next(iter(session.history(vin, "diagnostics.odometer"))).timestamp is not None
    assert saved == []  # nothing refreshed yet

    # A consent token is not an application token: the stream and fleet refuse it.
    with pytest.raises(PermissionDenied):
        client._run(dataclasses.replace(_core.get_fleet_call(vin), auth=token.access_token))

    session = client.vehicle(stale(token), on_refresh=saved.append)
    assert session.vehicleinfo().vin == vin
    [rotated] = saved
    assert rotated.refresh_token != token.refresh_token
    assert session.token == rotated
    # The rotated-out refresh token is dead after the grace window; within it, it buys the
    # same pair again (what a second process would get).
    again = client.refresh(token.refresh_token)
    assert again.access_token == rotated.access_token

    session.revoke()
    # The access token is refused (401), and the refresh that would cure it is too: the
    # grant ended, the owner must consent again.
    with pytest.raises(InvalidGrant):
        session.get_vehicle_data(vin)
    with pytest.raises(AuthenticationError):
        client._run(_core.vehicleinfo_call(rotated.access_token))
    with pytest.raises(InvalidGrant):
        client.refresh(rotated.refresh_token)


def test_a_callback_is_checked_before_its_code_is_sent(client: Client, server: LiveServer) -> None:
    """RFC 9207 mix-up defence: an answer that names another issuer (here the sandbox's
    answer handed to a production client of the same deployment) is refused before its
    code goes to a token endpoint; so is another request's state. The real answer then
    still works (the code was never spent)."""
    callback, verifier = approved(server, client)
    assert f"iss={quote(server.sandbox, safe='')}" in callback
    production = Client(server.root, "someone-else", "secret", environment="production")
    with pytest.raises(ConsentError) as foreign:
        production.exchange_callback(callback, REDIRECT_URI, state="st-1", code_verifier=verifier)
    assert foreign.value.error == "issuer_mismatch"
    with pytest.raises(ConsentError) as wrong_state:
        client.exchange_callback(callback, REDIRECT_URI, state="st-2", code_verifier=verifier)
    assert wrong_state.value.error == "state_mismatch"
    denied = f"{REDIRECT_URI}?" + urlencode(
        {"error": "access_denied", "state": "st-1", "iss": server.sandbox}
    )
    with pytest.raises(ConsentError) as refused:
        client.exchange_callback(denied, REDIRECT_URI, state="st-1")
    assert refused.value.error == "access_denied"
    token = client.exchange_callback(callback, REDIRECT_URI, state="st-1", code_verifier=verifier)
    assert token.status == "approved"


def test_two_threads_refresh_once(client: Client, server: LiveServer) -> None:
    token = grant(server, client)
    saved: list[VehicleToken] = []
    session = client.vehicle(stale(token), on_refresh=saved.append)
    barrier = threading.Barrier(4)
    seen: list[str] = []

    def read() -> None:
        barrier.wait()
        seen.append(session.vehicleinfo().vin)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 4
    assert len(saved) == 1  # one refresh, whose result every thread used
    # The refresh token is not burnt: the grant refreshes again later.
    assert client.refresh(saved[0].refresh_token).refresh_token != saved[0].refresh_token


async def test_coroutines_refresh_once_and_processes_share_the_grace(server: LiveServer) -> None:
    assert server.demo is not None
    with server.client() as sync_client:
        token = grant(server, sync_client)
    async with AsyncClient(
        server.root, server.demo.client_id, server.demo.client_secret, environment="sandbox"
    ) as client:
        saved: list[VehicleToken] = []

        async def store(new: VehicleToken) -> None:  # an async storage callback
            saved.append(new)

        session = client.vehicle(stale(token), on_refresh=store)
        infos = await asyncio.gather(*(session.vehicleinfo() for _ in range(5)))
        assert {info.vin for info in infos} == {server.demo.vins["driving"]}
        assert len(saved) == 1

        # Two processes (two sessions, no shared lock) holding the same stale token:
        # the server's grace window gives both the same new pair, nobody is logged out.
        current = saved[0]
        first = client.vehicle(stale(current))
        second = client.vehicle(stale(current))
        a, b = await asyncio.gather(first.access_token(), second.access_token())
        assert a == b
        assert first.token.refresh_token == second.token.refresh_token
        data = await second.get_vehicle_data(server.demo.vins["driving"])
        assert data.vin == server.demo.vins["driving"]
        history = second.history(data.vin, "diagnostics.odometer", page_size=1)
        assert (await anext(history)).data["unit"] == "kilometers"
        await second.revoke()
        with pytest.raises(InvalidGrant):
            await first.vehicleinfo()
