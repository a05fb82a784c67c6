"""What the console's pages share: a form's errors (`form_errors`), the application an
URL names, looked up through the account (another account's id is the
same 404 as an unknown one), the application picker, and multipart forms (the fleet's
CSV upload), whose CSRF token is checked like any form's."""

from __future__ import annotations

from pydantic import ValidationError
from starlette.requests import Request

from autoport.apps.schemas import Application
from autoport.console import access, service
from autoport.console.access import Principal
from autoport.console.routes import errors_of, validation_errors
from autoport.kit.errors import ApiError
from autoport.web import forms

# The picker lists this many applications (with a search box for the rest).
PICKER_SIZE = 100
# A CSV upload or pasted VIN list: far above 1,000 lines of VIN, brand and a few tags.
MAX_UPLOAD_BYTES = 512 * 1024


def form_errors(error: ApiError | ValidationError) -> dict[str, str]:
    """A service's refusal or the admin API's request model's validation errors as a
    form's field errors (the API's messages)."""
    if isinstance(error, ValidationError):
        return validation_errors(error)
    return errors_of(error)


async def account_application(
    request: Request, principal: Principal, account_id: str, app_id: str
) -> Application:
    state, environment = access.where(request)
    application = await service.get_application_of_account(
        state.database.reader, environment, account_id, app_id.strip().upper()
    )
    if application is None:
        raise access.not_found()
    return application


async def applications_for_picker(
    request: Request, account_id: str, search: str | None
) -> list[Application]:
    state, environment = access.where(request)
    return await service.list_applications_of_account(
        state.database.reader,
        environment,
        account_id,
        limit=PICKER_SIZE,
        after=None,
        search=(search or "").strip()[:200] or None,
    )


async def multipart_form(request: Request, principal: Principal) -> dict[str, str]:
    """A `multipart/form-data` POST (text fields and uploaded files, as UTF-8 text) or
    an url-encoded one, after its CSRF token was checked. Too large: the 413 page."""
    form = await forms.form(request, limit=MAX_UPLOAD_BYTES)
    access.check_csrf(request, form.get("csrf_token"), principal)
    return form
