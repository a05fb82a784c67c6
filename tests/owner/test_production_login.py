"""The owner portal's carmaker login in production: a brand whose connector has its own
login (the template connector against a real HTTP server playing the carmaker) never
takes an answer of the sandbox's simulated carmaker, whose password is public."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from tests.consent.conftest import simulated_carmaker_answer
from tests.consent.test_production_verification import oem_owner  # noqa: F401
from tests.fleet.test_template_connector import VIN, Carmaker, carmaker  # noqa: F401

from .conftest import csrf_of, sign_in

OWNER = "/owner"


async def test_the_simulated_carmaker_s_answer_never_signs_in_to_a_real_brand(
    oem_owner: tuple[httpx.AsyncClient, FastAPI],  # noqa: F811
    carmaker: tuple[Carmaker, str],  # noqa: F811
) -> None:
    # Our production state taken to the sandbox's simulated login (it serves bmw in the
    # sandbox environment and signs with the same secret), its signed answer brought
    # back to the production callback: refused, the session stays signed out.
    client, _ = oem_owner
    fake, url = carmaker
    started = await sign_in(client, brand="bmw", vin=VIN, prefix=OWNER)
    assert started.headers["location"] == f"{OWNER}/verify", started.text[:300]
    page = await client.get(f"{OWNER}/verify")
    sent = await client.post(
        f"{OWNER}/verify", data={"csrf_token": csrf_of(page), "action": "oem_login"}
    )
    assert sent.status_code == 303 and sent.headers["location"].startswith(url)
    result = await simulated_carmaker_answer(client, sent.headers["location"])
    refused = await client.get(f"{OWNER}/oem-callback", params={"result": result})
    assert refused.status_code == 403
    assert (await client.get(f"{OWNER}/vehicles")).status_code == 401
    assert fake.token_requests == []
