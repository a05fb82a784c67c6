"""The console's Sandbox vehicles page: its address and a car created through it, shared
by the sandbox page and live view tests."""

from __future__ import annotations

from .conftest import Browser

VIN = "SBX00000000000777"


def page(world_account: str, vin: str = "") -> str:
    return f"/console/a/{world_account}/sandbox" + (f"/{vin}" if vin else "")


async def created(browser: Browser, account: str, **form: str) -> str:
    await browser.get(page(account))
    fields = {"vin": VIN, "name": "Test car", "powertrain": "combustion", "scenario": "driving"}
    answer = await browser.post(page(account), {**fields, **form})
    assert answer.status_code == 303, answer.text
    return answer.headers["location"]
