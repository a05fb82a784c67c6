"""The console's Usage page: for each application of the account, requests per day,
the requests its rate limit turned away, and the share of webhook deliveries that
succeeded, over the last days (autoport.usage.service), as a table and charts."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.responses import Response

from autoport.apps import service as apps_service
from autoport.console import pages
from autoport.console.access import AccountPageDep, console_router
from autoport.kit import paging
from autoport.kit.errors import ApiError
from autoport.usage import service as usage

router = console_router()

# Charts draw this many applications (the busiest); the table shows all of the page.
CHARTED = 8
DAYS_WORDS = pages._("days: enter a whole number of days")


@router.get("/a/{account_id}/usage")
async def usage_page(page: AccountPageDep) -> Response:
    request, state, environment = page.request, page.state, page.environment
    account_id = page.account_id
    errors: dict[str, str] = {}
    raw_days = request.query_params.get("days", "")
    try:
        days = usage.checked_days(int(raw_days) if raw_days.strip() else None)
    except ValueError:
        errors = {"days": pages.gettext(page.principal.locale, DAYS_WORDS)}
        days = usage.DEFAULT_DAYS
    except ApiError as error:
        errors = page.errors(error)
        days = usage.DEFAULT_DAYS
    # The account's applications a page at a time (newest first, as on Applications).
    scope = ("console.usage", str(environment), account_id)
    cursor = request.query_params.get("cursor")
    after = None
    if cursor:
        at, app_id = paging.decode_cursor(state.token_key, scope, cursor, (int, str))
        after = (int(at), str(app_id))
    size = state.settings.console_page_size
    applications = await apps_service.list_applications_of_account(
        state.database.reader, environment, account_id, limit=size + 1, after=after
    )
    next_url = None
    if len(applications) > size:
        applications = applications[:size]
        last = applications[-1]
        token = paging.encode_cursor(state.token_key, scope, [last.created_at, last.id])
        next_url = page.url("usage") + "?" + urlencode({"days": days, "cursor": token})
    report = await usage.usage_report(
        state.database.reader,
        environment=str(environment),
        applications=[(a.id, a.name) for a in applications],
        now_us=state.clock.now_us(),
        days=days,
    )
    busiest = sorted(report.applications, key=lambda a: -a.total_requests)[:CHARTED]
    chart = {
        "x": report.day_starts,
        "requests": [{"label": a.name, "values": a.requests} for a in busiest],
        "success": [{"label": a.name, "values": a.daily_success_rate()} for a in busiest],
    }
    # The figures per day of the applications shown (the charts' text alternative).
    daily = [
        {
            "day": day,
            "requests": sum(a.requests[i] for a in report.applications),
            "rate_limited": sum(a.rate_limited[i] for a in report.applications),
            "succeeded": sum(a.succeeded[i] for a in report.applications),
            "failed": sum(a.failed[i] for a in report.applications),
        }
        for i, day in enumerate(report.days)
    ]
    return page.render(
        "usage.html",
        daily=list(reversed(daily)),
        status=422 if errors else 200,
        title="usage",
        report=report,
        days=days,
        errors=errors,
        chart=chart,
        next_url=next_url,
    )
