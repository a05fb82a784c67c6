"""The authorizations' lifecycle, as the consent flow drives it: a single-use code for an
authorization (`issue_authorization_code`, RFC 6749 §4.1.2) and its status changes
(`set_authorization_status`). The token endpoint's grants are in autoport.oauth.grants,
revocation in autoport.oauth.revocation, what they issue in autoport.oauth.tokens.

Failures that must still be recorded (a reused code or refresh token revokes its token
family) are committed first and raised after the transaction; every other failure is
raised inside it, so nothing half-done is stored.
"""

from __future__ import annotations

import uuid

from autoport.apps.service import find_application
from autoport.kit import outbox
from autoport.kit.auth import GrantStatus
from autoport.kit.clock import MICROS
from autoport.kit.crypto import new_token
from autoport.kit.db import Connection
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.oauth import pkce, repository
from autoport.oauth.tokens import CODE_PREFIX, code_hash


async def issue_authorization_code(
    conn: Connection,
    *,
    environment: Environment,
    application_id: str,
    authorization_id: str,
    redirect_uri: str,
    code_challenge: str | None,
    code_challenge_method: str | None,
    now_us: int,
    lifetime_seconds: int = 600,
) -> str:
    """A single-use code for an existing authorization (pending or approved), bound to
    the application, the exact redirect_uri and the PKCE challenge. Returns the code."""
    application = await find_application(conn, environment=environment, app_id=application_id)
    if application is None:
        raise ApiError(404, f"no application {application_id!r}", source="application_id")
    # RFC 6749 §3.1.2.3: the redirect_uri must be one the client registered, exactly.
    if redirect_uri not in application.redirect_uris:
        raise ApiError(
            422, "redirect_uri is not registered for the application", source="redirect_uri"
        )
    authorization = await repository.get_authorization(
        conn, authorization_id=authorization_id, environment=str(environment)
    )
    if authorization is None or authorization["application_id"] != application_id:
        raise ApiError(404, f"no authorization {authorization_id!r}", source="authorization_id")
    if authorization["status"] not in (GrantStatus.pending, GrantStatus.approved):
        raise ApiError(
            409, f"the authorization is {authorization['status']}", source="authorization_id"
        )
    # Whether a confidential client must send a challenge is the consent entry's check
    # (it has the settings); the code grant enforces it again at the exchange.
    problem = pkce.challenge_problem(
        code_challenge, code_challenge_method, must=application.is_public
    )
    if problem is not None:
        method_named = problem.startswith("code_challenge_method")
        raise ApiError(
            422, problem, source="code_challenge_method" if method_named else "code_challenge"
        )
    method = (code_challenge_method or pkce.DEFAULT_METHOD) if code_challenge else None
    code = new_token(CODE_PREFIX)
    await repository.create_code(
        conn,
        {
            "code_hash": code_hash(code),
            "environment": str(environment),
            "application_id": application_id,
            "authorization_id": authorization_id,
            "family_id": str(uuid.uuid4()),
            "redirect_uri": redirect_uri,
            "code_challenge": code_challenge or None,
            "code_challenge_method": method,
            "created_at": now_us,
            # RFC 6749 §4.1.2: "A maximum authorization code lifetime of 10 minutes".
            "expires_at": now_us + min(lifetime_seconds, 600) * MICROS,
        },
    )
    return code


_TRANSITIONS: dict[str, tuple[str, ...]] = {
    GrantStatus.approved: (GrantStatus.pending,),
    GrantStatus.rejected: (GrantStatus.pending,),
    GrantStatus.revoked: (GrantStatus.pending, GrantStatus.approved),
}


async def set_authorization_status(
    conn: Connection,
    *,
    environment: Environment,
    authorization_id: str,
    status: str,
    now_us: int,
    detail: str | None = None,
) -> bool:
    """pending -> approved | rejected, pending/approved -> revoked; emits
    `authorization_changed`. Rejecting or revoking ends every token of the grant.
    Returns False when the authorization already had that status (nothing emitted)."""
    allowed_from = _TRANSITIONS.get(status)
    if allowed_from is None:
        raise ApiError(422, f"status must be approved, rejected or revoked, got {status!r}")
    row = await repository.update_authorization_status(
        conn,
        authorization_id=authorization_id,
        environment=str(environment),
        status=status,
        allowed_from=allowed_from,
        now_us=now_us,
    )
    if row is None:
        current = await repository.get_authorization(
            conn, authorization_id=authorization_id, environment=str(environment)
        )
        if current is None:
            raise ApiError(404, f"no authorization {authorization_id!r}", source="authorization_id")
        if current["status"] == status:
            return False
        raise ApiError(
            409,
            f"the authorization is {current['status']}; it cannot become {status}",
            source="status",
        )
    if status in (GrantStatus.revoked, GrantStatus.rejected):
        await repository.revoke_authorization_tokens(conn, authorization_id, now_us)
    await outbox.emit(
        conn,
        environment=environment,
        event_type="authorization_changed",
        payload={"action": status, "authorization_id": authorization_id, "detail": detail},
        now_us=now_us,
        vin=row["vin"],
        application_id=row["application_id"],
    )
    return True
