"""What the console's application pages share: the application picker and the brands an
application may be given in this environment, with the names people write."""

from __future__ import annotations

from collections.abc import Iterable

from autoport.apps import service as apps_service
from autoport.apps.schemas import Application
from autoport.catalog.brands import BRANDS, SANDBOX_BRAND, brand_name
from autoport.console.access import AccountPage
from autoport.kit.environments import Environment

# The picker lists this many applications (with a search box for the rest).
PICKER_SIZE = 100


async def applications_for_picker(page: AccountPage, search: str | None) -> list[Application]:
    return await apps_service.list_applications_of_account(
        page.state.database.reader,
        page.environment,
        page.account.id,
        limit=PICKER_SIZE,
        after=None,
        search=(search or "").strip()[:200] or None,
    )


def usable_brands(environment: Environment) -> list[str]:
    """What an application can be given here: in the sandbox the emulated carmaker's
    brand (its cars are `sandbox` cars), in production every carmaker but it."""
    if environment is Environment.sandbox:
        return [SANDBOX_BRAND]
    return sorted(BRANDS - {SANDBOX_BRAND}, key=brand_name)


def brand_choices(brands: Iterable[str], current: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(id, name) of `brands`, and of the application's `current` ones not among them
    (an application keeps what it was given: its form shows them checked)."""
    listed = list(dict.fromkeys([*brands, *current]))
    return [(brand, brand_name(brand)) for brand in listed]
