"""The usage figures of an account's applications, for the console: requests per
application and day, the requests its vehicle data rate limit turned away (429), and
the share of webhook deliveries that succeeded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from autoport.kit.db import Connection
from autoport.kit.errors import ApiError
from autoport.kit.usage import day_text
from autoport.usage import repository

_DAY_US = 86_400 * 1_000_000
DEFAULT_DAYS = 14
MAX_DAYS = 90


@dataclass(slots=True)
class ApplicationUsage:
    application_id: str
    name: str
    # Per day of the report's `days`, oldest first.
    requests: list[int]
    rate_limited: list[int]
    succeeded: list[int]
    failed: list[int]
    pending: int = 0

    @property
    def total_requests(self) -> int:
        return sum(self.requests)

    @property
    def total_rate_limited(self) -> int:
        return sum(self.rate_limited)

    @property
    def success_rate(self) -> float | None:
        """Succeeded / settled deliveries in the period; None when none settled."""
        settled = sum(self.succeeded) + sum(self.failed)
        return None if settled == 0 else sum(self.succeeded) / settled

    def daily_success_rate(self) -> list[float | None]:
        return [
            None if s + f == 0 else round(s / (s + f) * 100, 1)
            for s, f in zip(self.succeeded, self.failed, strict=True)
        ]


@dataclass(slots=True)
class UsageReport:
    days: list[str]  # ISO dates, oldest first, ending today (UTC)
    day_starts: list[int]  # unix seconds of each day's start (the charts' x values)
    applications: list[ApplicationUsage] = field(default_factory=list)


def checked_days(value: int | None) -> int:
    days = DEFAULT_DAYS if value is None else value
    if not 1 <= days <= MAX_DAYS:
        raise ApiError(422, f"days: must be between 1 and {MAX_DAYS}", source="days")
    return days


async def usage_report(
    conn: Connection,
    *,
    environment: str,
    applications: Sequence[tuple[str, str]],
    now_us: int,
    days: int = DEFAULT_DAYS,
) -> UsageReport:
    """The figures of `applications` ((id, name): those the caller may see, nothing else
    is read) for the last `days` UTC days, today included."""
    today = now_us // _DAY_US
    numbers = list(range(today - days + 1, today + 1))
    report = UsageReport(
        days=[day_text(n) for n in numbers], day_starts=[n * 86_400 for n in numbers]
    )
    index = {n: i for i, n in enumerate(numbers)}
    by_text = {day_text(n): i for n, i in index.items()}
    by_app: dict[str, ApplicationUsage] = {}
    for app_id, name in applications:
        by_app[app_id] = ApplicationUsage(
            app_id, name, [0] * days, [0] * days, [0] * days, [0] * days
        )
        report.applications.append(by_app[app_id])
    ids = list(by_app)
    for row in await repository.list_daily_requests(
        conn, environment=environment, application_ids=ids, since_day=report.days[0]
    ):
        at = by_text.get(row["day"])
        usage = by_app.get(row["application_id"])
        if at is None or usage is None:
            continue
        usage.requests[at] += int(row["requests"])
        usage.rate_limited[at] += int(row["rate_limited"])
    for row in await repository.list_daily_deliveries(
        conn, environment=environment, application_ids=ids, since_us=numbers[0] * _DAY_US
    ):
        at = index.get(int(row["day"]))
        usage = by_app.get(row["application_id"])
        if at is None or usage is None:
            continue
        if row["status"] == "succeeded":
            usage.succeeded[at] += int(row["n"])
        elif row["status"] == "failed":
            usage.failed[at] += int(row["n"])
        else:
            usage.pending += int(row["n"])
    return report
