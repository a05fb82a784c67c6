"""The consent page lists the vehicle commands an application asks for, apart from the
data, in plain words and both languages (Chromium via Playwright, a real server); the
owner's approval grants them: the token carries their `set` scopes."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from autoport.kit.db import Database
from tests.consent.conftest import VIN
from tests.consent.test_browser import (  # noqa: F401 - fixtures
    TEXT,
    Server,
    back_at_application,
    browser,
    expect_heading,
    page,
    server,
    shot,
)
from tests.factories import pkce_pair

pytestmark = pytest.mark.browser

COMMANDS = ["doors.lock_unlock_doors", "charging.start_stop_charging"]
WORDS = {
    "en-GB": {
        "heading": "It also asks to send 2 commands to your vehicle:",
        "labels": ["Start and stop charging", "Lock and unlock the doors"],
    },
    "de-DE": {
        "heading": "Außerdem bittet sie darum, 2 Befehle an Ihr Fahrzeug zu senden:",
        "labels": ["Laden starten und beenden", "Die Türen ver- und entriegeln"],
    },
}


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_review_lists_commands_apart_from_data(server: Server, page: Any, locale: str) -> None:  # noqa: F811
    app = server.application()

    async def register(db: Database) -> None:
        await db.execute(
            "UPDATE applications SET commands = :c WHERE id = :id",
            {"c": orjson.dumps(COMMANDS).decode(), "id": app.id},
        )

    server.run(register)
    verifier, challenge = pkce_pair()
    page.goto(server.entry_url(app, vin=VIN, state="cmd", code_challenge=challenge))
    if locale == "de-DE":
        page.get_by_role("link", name="Deutsch").click()
    words = TEXT[locale]
    expect_heading(page, words["brand"])
    page.get_by_label("Sandbox", exact=True).check()
    page.get_by_role("button", name=words["continue"]).click()
    expect_heading(page, words["vehicle"])
    page.get_by_role("button", name=words["continue"]).click()
    page.wait_for_url("**/oauth/consent/review")
    heading = page.locator("#commands-heading")
    assert heading.inner_text() == WORDS[locale]["heading"]
    listed = page.locator("section.commands li").all_inner_texts()
    assert listed == WORDS[locale]["labels"]
    # Apart from the data: not inside the data groups.
    assert WORDS[locale]["labels"][0] not in page.locator(".groups").inner_text()
    shot(page, f"commands-review-{locale}")
    page.get_by_role("button", name=words["approve"]).click()
    received = back_at_application(page, server)
    tokens = server.exchange(app, received["code"], verifier)
    scopes = tokens["scope"].split()
    assert {"doors.set.locks_state", "charging.set.status"} <= set(scopes)


def test_no_commands_no_command_section(server: Server, page: Any) -> None:  # noqa: F811
    app = server.application()
    page.goto(server.entry_url(app, vin=VIN, state="plain"))
    page.get_by_label("Sandbox", exact=True).check()
    page.get_by_role("button", name=TEXT["en-GB"]["continue"]).click()
    page.get_by_role("button", name=TEXT["en-GB"]["continue"]).click()
    page.wait_for_url("**/oauth/consent/review")
    assert page.locator("#commands-heading").count() == 0
