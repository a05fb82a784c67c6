"""The console's Fleet page, through the real app on both backends: a CSV upload and a
pasted VIN list with one result per line, filters, paging, removal; viewers only look;
another account's application is a 404 on every URL; forms need their CSRF token."""

from __future__ import annotations

import httpx
import pytest

from autoport.config import Settings
from autoport.fleet import repository as fleet_repository
from autoport.fleet.repository import VehicleKey
from autoport.kit.environments import Environment

from .conftest import Browser, Console, World

VINS = [f"SBX0000000000{n:04d}" for n in range(1, 9)]
CSV = (
    "vin,brand,depot\n"
    + "\n".join(f"{vin},sandbox,north" for vin in VINS[:3])
    + "\nBAD,sandbox,x\n"
)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"console_page_size": 5})


def fleet(world_app: str, account: str) -> str:
    return f"/console/a/{account}/fleet/{world_app}"


async def upload(browser: Browser, path: str, csv: str, vins: str = "") -> httpx.Response:
    """The add form sent with a CSV file, and the fleet page the answer leads to (the
    results are shown there once: POST -> redirect -> GET)."""
    await browser.get(path)
    return await browser.client.post(
        browser.prefix + path + "/add",
        data={"csrf_token": browser.csrf, "vins": vins, "brand": "sandbox"},
        files={"csv": ("fleet.csv", csv.encode(), "text/csv")},
        follow_redirects=True,
    )


async def stored(console: Console, app_id: str, vin: str) -> str | None:
    vehicle = await fleet_repository.get(
        console.database.reader, VehicleKey(Environment.sandbox, app_id, vin)
    )
    return None if vehicle is None else str(vehicle.status)


async def test_a_csv_upload_adds_vehicles_with_a_result_per_line(
    console: Console, world: World
) -> None:
    browser = await console.signed_in(world.a.developer)
    path = fleet(world.a.app_id, world.a.id)
    answer = await upload(browser, path, CSV, vins=f"{VINS[3]}\n{VINS[4]},tesla")
    assert answer.status_code == 200, answer.text
    page = answer.text
    for vin in VINS[:4]:
        assert vin in page
    assert "BAD" in page and "vin: " in page  # the line's own error, the API's message
    assert "brand: " in page and "not activated" in page
    assert "pending: 4" in page and "error: 2" in page
    for vin in VINS[:4]:
        assert await stored(console, world.a.app_id, vin) == "pending"
    assert await stored(console, world.a.app_id, VINS[4]) is None
    # The list shows tags and changelog.
    listed = await browser.get(path)
    assert "depot=north" in listed.text and "Entries: 1" in listed.text


async def test_filter_and_paging(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.owner)
    path = fleet(world.a.app_id, world.a.id)
    answer = await upload(browser, path, "\n".join(VINS))
    assert answer.status_code == 200
    first = await browser.get(path)
    assert [vin for vin in VINS if vin in first.text] == VINS[:5]
    assert "Next page" in first.text
    next_url = first.text.split('class="pager"><a href="')[1].split('"')[0].replace("&amp;", "&")
    second = await browser.client.get(next_url)
    assert [vin for vin in VINS if vin in second.text.split("Add vehicles")[0]] == VINS[5:]
    one = await browser.get(path + f"?vin={VINS[2]}")
    assert VINS[2] in one.text and VINS[1] not in one.text
    by_status = await browser.get(path + "?status=approved")
    assert "No vehicle matches the filter." in by_status.text
    bad = await browser.get(path + "?vin=nonsense")
    assert bad.status_code == 422
    assert 'id="f-vin-error"' in bad.text and "filter.vin" in bad.text
    bad_status = await browser.get(path + "?status=flying")
    assert bad_status.status_code == 422 and "unknown status" in bad_status.text
    forged = await browser.get(path + "?cursor=forged")
    assert forged.status_code == 400


async def test_too_many_lines_re_renders_the_form_with_the_field_error(
    console: Console, world: World
) -> None:
    browser = await console.signed_in(world.a.developer)
    path = fleet(world.a.app_id, world.a.id)
    lines = "\n".join(f"SBX{n:014d}" for n in range(1001))
    answer = await upload(browser, path, "", vins=lines)
    assert answer.status_code == 422
    assert 'id="vehicles-error"' in answer.text and "at most 1000 vehicles" in answer.text
    assert "SBX00000000000999" in answer.text  # the pasted list is kept
    empty = await upload(browser, path, "", vins="")
    assert empty.status_code == 422 and "no VIN given" in empty.text


async def test_remove(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.developer)
    path = fleet(world.a.app_id, world.a.id)
    await upload(browser, path, VINS[0])
    await browser.get(path)
    done = await browser.post(path + "/remove", {"vin": VINS[0]})
    assert done.status_code == 303
    assert await stored(console, world.a.app_id, VINS[0]) == "canceling"
    again = await browser.post(path + "/remove", {"vin": VINS[0]})
    assert again.status_code == 409 and "already being removed" in again.text
    unknown = await browser.post(path + "/remove", {"vin": VINS[5]})
    assert unknown.status_code == 404


async def test_a_viewer_only_looks(console: Console, world: World) -> None:
    developer = await console.signed_in(world.a.developer)
    path = fleet(world.a.app_id, world.a.id)
    await upload(developer, path, VINS[0])
    viewer = await console.signed_in(world.a.viewer)
    page = await viewer.get(path)
    assert page.status_code == 200 and VINS[0] in page.text
    assert "Add vehicles" not in page.text and "/remove" not in page.text
    refused = await upload(viewer, path, VINS[1])
    assert refused.status_code == 403
    assert (await viewer.post(path + "/remove", {"vin": VINS[0]})).status_code == 403
    assert await stored(console, world.a.app_id, VINS[1]) is None
    assert await stored(console, world.a.app_id, VINS[0]) == "pending"


@pytest.mark.parametrize("role", ["owner", "developer", "viewer"])
async def test_another_accounts_fleet_is_a_404_everywhere(
    console: Console, world: World, role: str
) -> None:
    owner_b = await console.signed_in(world.b.owner)
    await upload(owner_b, fleet(world.b.app_id, world.b.id), VINS[0])
    person = getattr(world.a, role)
    browser = await console.signed_in(person)
    await browser.get(fleet(world.a.app_id, world.a.id))  # a valid CSRF token of A's session
    for path in (
        fleet(world.b.app_id, world.b.id),  # B's account
        fleet(world.b.app_id, world.a.id),  # B's application through A's account
        f"/console/a/{world.b.id}/fleet",
    ):
        page = await browser.client.get(browser.prefix + path)
        assert page.status_code == 404, path
        assert VINS[0] not in page.text
    for path in (fleet(world.b.app_id, world.a.id), fleet(world.b.app_id, world.b.id)):
        added = await browser.client.post(
            browser.prefix + path + "/add",
            data={"csrf_token": browser.csrf, "vins": VINS[1], "brand": "sandbox"},
        )
        assert added.status_code == 404
        removed = await browser.post(path + "/remove", {"vin": VINS[0]})
        assert removed.status_code == 404
    assert await stored(console, world.b.app_id, VINS[1]) is None
    assert await stored(console, world.b.app_id, VINS[0]) == "pending"
    # The picker lists only A's applications.
    picker = await browser.get(f"/console/a/{world.a.id}/fleet")
    assert world.a.app_id in picker.text and world.b.app_id not in picker.text


async def test_the_operator_sees_any_account_and_forms_need_csrf(
    console: Console, world: World
) -> None:
    operator = await console.operator()
    path = fleet(world.b.app_id, world.b.id)
    assert (await operator.get(path)).status_code == 200
    no_token = await operator.client.post(
        operator.prefix + path + "/add", data={"vins": VINS[0], "brand": "sandbox"}
    )
    assert no_token.status_code == 403
    wrong = await operator.client.post(
        operator.prefix + path + "/add",
        data={"csrf_token": "x" * 43, "vins": VINS[0]},
        files={"csv": ("f.csv", b"", "text/csv")},
    )
    assert wrong.status_code == 403
    assert await stored(console, world.b.app_id, VINS[0]) is None
    done = await upload(operator, path, VINS[0])
    assert done.status_code == 200 and await stored(console, world.b.app_id, VINS[0]) == "pending"


async def test_german(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.developer)
    page = await browser.get(fleet(world.a.app_id, world.a.id) + "?lang=de-DE")
    assert page.headers["content-language"] == "de-DE"
    assert "Fahrzeuge hinzufügen" in page.text


async def test_an_upload_answers_with_a_redirect_and_a_reload_adds_nothing(
    console: Console, world: World
) -> None:
    """POST -> redirect -> GET (issue #36): the upload's answer is a 303 to the fleet
    page, which shows the results once; loading it again shows the fleet, and nothing is
    sent twice. Opening the form's address is a page, not the API's JSON."""
    browser = await console.signed_in(world.a.developer)
    path = fleet(world.a.app_id, world.a.id)
    await browser.get(path)
    posted = await browser.client.post(
        browser.prefix + path + "/add",
        data={"csrf_token": browser.csrf, "vins": VINS[3], "brand": "sandbox"},
        files={"csv": ("fleet.csv", CSV.encode(), "text/csv")},
    )
    assert posted.status_code == 303
    assert posted.headers["location"] == f"/sandbox{path}"
    shown = await browser.get(path)
    assert "Result of the upload" in shown.text and "pending: 4" in shown.text
    again = await browser.get(path)
    assert again.status_code == 200 and "Result of the upload" not in again.text
    entries = await console.database.fetch_value(
        "SELECT COUNT(*) FROM fleet_vehicles WHERE application_id = :a", {"a": world.a.app_id}
    )
    assert entries == 4
    opened = await browser.get(path + "/add")
    assert opened.status_code == 405 and opened.headers["allow"] == "POST"
    assert opened.headers["content-type"].startswith("text/html")
    assert "This address takes a form" in opened.text
