"""The sandbox's simulated carmaker login: where the `oem_login` verification of a sandbox
brand sends the owner (the sandbox connector names the page,
`BrandConnector.oem_login_page`), in the consent flow and in the owner portal.

It speaks the signed protocol a real carmaker's login adapter replaces
(autoport.proof.service): it takes our signed `state`, accepts any e-mail address
with the sandbox password, and sends the owner back with a signed `result` bound to the
session's single-use nonce. The pages are the consent flow's (templates, stylesheet,
languages, error page); only brands the sandbox connector serves are simulated, so a real
brand's owners never prove ownership with the sandbox password.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from starlette.responses import Response

from autoport.brands.registry import registry_of
from autoport.brands.sandbox import SIMULATED_OEM_LOGIN
from autoport.consent import pages
from autoport.kit.crypto import same
from autoport.kit.environments import environment_of
from autoport.kit.state import AppState
from autoport.proof.service import BACK_TO_OWNER, oem_result, unsign
from autoport.web import forms
from autoport.web.errors import PageError
from autoport.web.http import prefix, see_other

# The simulated carmaker accepts any e-mail address with this password (sandbox only).
SANDBOX_OEM_PASSWORD = "sandbox"  # noqa: S105 - a documented sandbox credential

router = pages.router()


def simulated_oem_owns(account: str, password: str) -> bool:
    """The sandbox carmaker: every vehicle belongs to whoever signs in with the sandbox
    password and something that looks like an e-mail address."""
    name, at, domain = account.partition("@")
    return bool(name and at and "." in domain) and same(password, SANDBOX_OEM_PASSWORD)


def _state_payload(request: Request, state: AppState, brand: str, signed: str) -> dict[str, Any]:
    """The signed state's payload, refused (the consent error page, 400) when it is
    forged, expired, for another brand, or the brand's connector is not the simulated
    carmaker."""
    secret = state.session_key
    payload = unsign(secret, "oem-state", signed, now_us=state.clock.now_us())
    if (
        payload is None
        or payload.get("brand") != brand
        or registry_of(state).connector_for(environment_of(request), brand).oem_login_page(brand)
        is None
    ):
        raise PageError("oem_state", 400)
    return payload


def _login_page(
    request: Request, brand: str, signed: str, payload: dict[str, Any], **extra: Any
) -> Response:
    return pages.SURFACE.render(
        "oem_login.html",
        pages.request_locale(request),
        oem_brand=pages.brand_label(brand),
        signed_state=signed,
        vin=payload.get("vin"),
        action=prefix(request) + SIMULATED_OEM_LOGIN.format(brand=brand),
        stylesheet=pages.page_url(request, pages.STYLESHEET),
        switch=None,
        **extra,
    )


@router.get(SIMULATED_OEM_LOGIN)
async def oem_login_page(request: Request, brand: str) -> Response:
    """A carmaker's own login, simulated: what `oem_login` verification redirects to."""
    state: AppState = request.app.state.autoport
    signed = request.query_params.get("state", "")
    payload = _state_payload(request, state, brand, signed)
    return _login_page(request, brand, signed, payload)


@router.post(SIMULATED_OEM_LOGIN)
async def oem_login_submit(request: Request, brand: str) -> Response:
    state: AppState = request.app.state.autoport
    form = await forms.form(request)
    # The signed state is this page's CSRF protection: it is bound to one consent
    # session's nonce and expires.
    signed = form.get("state", "")
    payload = _state_payload(request, state, brand, signed)
    account = form.get("email", "").strip()
    if not simulated_oem_owns(account, form.get("password", "")):
        return _login_page(request, brand, signed, payload, status=401, email=account, failed=True)
    result = oem_result(
        state.session_key, state=payload, account=account, now_us=state.clock.now_us()
    )
    back = (
        f"{prefix(request)}/owner/oem-callback"
        if payload.get("back") == BACK_TO_OWNER
        else pages.page_url(request, "oem-callback")
    )
    return see_other(f"{back}?{urlencode({'result': result})}")
