"""Pages a newcomer can read (issue #36, item 4), through the real app: form errors in
plain words of the reader's language (never pydantic's), carmakers by their names and
only those usable in the environment, a streaming page that offers no MQTT password where
there is no MQTT, a language link that stays in the environment, and an address of a form
opened in the browser answered with a page, not the API's JSON."""

from __future__ import annotations

import html
import re

import pytest

from autoport.kit.environments import Environment

from .conftest import Console, World


async def test_form_errors_are_plain_words_in_both_languages(
    console: Console, world: World
) -> None:
    browser = await console.signed_in(world.a.developer)
    base = f"/console/a/{world.a.id}/applications"
    await browser.get(base + "/new")
    empty = await browser.post(base, {"name": ""})
    assert empty.status_code == 422
    assert "name: enter at least 1 character" in empty.text
    assert "String should have" not in empty.text
    await browser.get(base + "/new?lang=de-DE")
    german = await browser.post(base, {"name": ""})
    assert "name: geben Sie mindestens 1 Zeichen ein" in german.text
    page = f"{base}/{world.a.app_id}"
    await browser.get(page)
    overlap = await browser.post(page + "/rotate-secret", {"overlap_seconds": "soon"})
    assert overlap.status_code == 422
    assert "overlap_seconds: geben Sie eine ganze Zahl ein" in overlap.text
    assert "Input should be" not in overlap.text


@pytest.mark.parametrize(("prefix", "offered"), [("/sandbox", {"Sandbox"}), ("", None)])
async def test_carmakers_are_named_and_only_usable_ones_offered(
    console: Console, world: World, prefix: str, offered: set[str] | None
) -> None:
    operator = await console.operator(prefix)
    environment = Environment.sandbox if prefix else Environment.production
    account = world.a.id if prefix else await console.add_account("Prod", environment)
    form = await operator.get(f"/console/a/{account}/applications/new")
    names = set(re.findall(r'name="brands" value="[^"]+"> ([^<]+)</label>', form.text))
    if offered is not None:
        assert names == offered
    else:
        assert {"Mercedes-Benz", "BMW", "Land Rover", "Volvo Cars"} <= names
        assert "Sandbox" not in names and "mercedes_benz" not in names


async def test_streaming_offers_no_mqtt_password_without_mqtt(
    console: Console, world: World
) -> None:
    assert console.app.state.autoport.settings.mqtt_url is None
    browser = await console.signed_in(world.a.developer)
    path = f"/console/a/{world.a.id}/streaming/{world.a.app_id}"
    page = await browser.get(path)
    assert page.status_code == 200
    assert "/credentials" not in page.text and "mqtt-username" not in page.text
    assert "publishes no MQTT" in page.text and "/v1/stream" in page.text
    refused = await browser.post(path + "/credentials", {})
    assert refused.status_code == 409 and "No MQTT here" in refused.text


@pytest.mark.parametrize("prefix", ["/sandbox", ""])
async def test_the_language_link_stays_in_the_environment(
    console: Console, world: World, prefix: str
) -> None:
    operator = await console.operator(prefix)
    environment = Environment.sandbox if prefix else Environment.production
    account = world.a.id if prefix else await console.add_account("Prod", environment)
    page = await operator.get(f"/console/a/{account}/applications?q=x")
    links = [html.unescape(link) for link in re.findall(r'href="([^"]+)" lang="de-DE"', page.text)]
    assert links == [f"{prefix}/console/a/{account}/applications?q=x&lang=de-DE"]


async def test_opening_the_address_of_a_form_is_a_page(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.owner)
    for path in (
        f"/console/a/{world.a.id}/applications/{world.a.app_id}/rotate-secret",
        f"/console/a/{world.a.id}/users/invite",
        "/console/sign-out",
    ):
        opened = await browser.get(path)
        assert opened.status_code == 405, path
        assert opened.headers["content-type"].startswith("text/html"), path
        assert "This address takes a form" in opened.text
        assert "POST" in opened.headers["allow"]


async def test_empty_pages_say_what_to_do_next(console: Console) -> None:
    """A new account's pages: each empty list says how it fills (in both languages)."""
    operator = await console.operator()
    account = await console.add_account("Empty Mobility")
    base = f"/console/a/{account}"
    expected = {
        "/applications": ("Create one with “New application”", "Legen Sie mit „Neue Anwendung“"),
        "/fleet": ("Create one on the Applications page first", "Legen Sie zuerst auf der Seite"),
        "/streaming": ("Create one on the Applications page first", "Legen Sie zuerst"),
        "/webhooks": ("then set its webhook here", "richten Sie dann hier ihren Webhook ein"),
        "/sandbox": ("Create one below: it starts delivering data", "Legen Sie unten eines an"),
    }
    for path, (english, german) in expected.items():
        page = await operator.get(base + path + "?lang=en-GB")
        assert english in html.unescape(page.text), path
        page = await operator.get(base + path + "?lang=de-DE")
        assert german in html.unescape(page.text), path
