"""The console's own logic: who signs in (the operator with the admin token, account
users with e-mail and password), sessions, single-use invitation and reset links, users
and roles, e-mail, and the audit log. Everything about applications, webhooks, fleets
... is the features' own services, called by the page routes as the admin API calls
them.

Passwords: argon2id (argon2-cffi's defaults, RFC 9106's second recommended set),
verified in a worker thread so a sign-in never stalls the event loop. Sign-in tries are
counted in the database (`consent_throttles`, kinds `console_signin*`) per e-mail
address and per client address, before the password is checked, so parallel guesses
count too.
"""

from __future__ import annotations

import asyncio
import re
import smtplib
import ssl
import uuid
from dataclasses import dataclass
from email.message import EmailMessage
from functools import lru_cache
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson
import structlog
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from autoport.apps import service as apps_service
from autoport.config import Settings, current_admin_token_sha256
from autoport.console import repository
from autoport.console.pages import OPERATOR, OWNER, USER_ROLES
from autoport.console.schemas import INVITE, AuditEntry, Invitation, NewLink, SessionRow, User
from autoport.kit import throttles
from autoport.kit.crypto import derive_key, new_token, same, seal, sha256_hex, token_hash, unseal
from autoport.kit.db import Connection, Database
from autoport.kit.environments import Environment, public_base_url
from autoport.kit.errors import ApiError
from autoport.streaming import service as streaming_service
from autoport.webhooks import service as webhooks_service
from autoport.webhooks.repository import WebhookRow

log = structlog.get_logger("autoport.console")

SESSION_PREFIX = "ap_cons_"
LINK_PREFIX = "ap_link_"
# The console's path under each environment's base URL.
CONSOLE_PATH = "/console"
THROTTLE_EMAIL = "console_signin"
THROTTLE_ADDRESS = "console_signin_ip"

_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,255}\.[^@\s.]{2,63}$|^[^@\s]{1,64}@localhost$")
MIN_PASSWORD = 12
MAX_PASSWORD = 1024


class SignInRefused(Exception):
    """Wrong credentials (`kind` "wrong") or too many tries (`kind` "throttled")."""

    def __init__(self, kind: str, retry_after: int = 0) -> None:
        super().__init__(kind)
        self.kind = kind
        self.retry_after = retry_after


# ------------------------------------------------------------------------ passwords


@lru_cache(maxsize=1)
def hasher() -> PasswordHasher:
    return PasswordHasher()


@lru_cache(maxsize=1)
def _decoy_hash() -> str:
    """Checked for unknown addresses, so a wrong address costs what a wrong password
    does (no account enumeration by timing)."""
    return hasher().hash(new_token())


def hash_password(password: str) -> str:
    return hasher().hash(password)


def _verify(stored: str, password: str) -> bool:
    try:
        return hasher().verify(stored, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


async def verify_password(stored: str | None, password: str) -> bool:
    ok = await asyncio.to_thread(_verify, stored or _decoy_hash(), password)
    return ok and stored is not None


def normal_email(email: str) -> str:
    return email.strip().lower()


def validate_email(email: str) -> str:
    value = normal_email(email)
    if not _EMAIL.fullmatch(value) or len(value) > 320:
        raise ApiError(422, "email: not an e-mail address", source="email")
    return value


def validate_password(password: str, confirm: str | None = None) -> str:
    if len(password) < MIN_PASSWORD:
        raise ApiError(
            422, f"password: must have at least {MIN_PASSWORD} characters", source="password"
        )
    if len(password) > MAX_PASSWORD:
        raise ApiError(
            422, f"password: must have at most {MAX_PASSWORD} characters", source="password"
        )
    if confirm is not None and confirm != password:
        raise ApiError(
            422, "password_confirm: does not match the password", source="password_confirm"
        )
    return password


def validate_role(role: str) -> str:
    if role not in USER_ROLES:
        raise ApiError(
            422, f"role: must be one of {', '.join(USER_ROLES)}, got {role!r}", source="role"
        )
    return role


# ------------------------------------------------------------------------- sign-in


def session_hash(key: bytes, token: str) -> str:
    return token_hash(key, f"console-session:{token}")


def link_hash(key: bytes, token: str) -> str:
    return token_hash(key, f"console-link:{token}")


def address_subject(key: bytes, address: str) -> str:
    # Addresses are kept only as keyed hashes (as the consent throttles keep them).
    return token_hash(key, f"console-address:{address}")


@dataclass(frozen=True, slots=True)
class SignedIn:
    token: str  # the new session's cookie value (a fresh one: rotation at sign-in)
    user: User | None  # None: the operator


async def _count_try(
    database: Database,
    *,
    settings: Settings,
    key: bytes,
    environment: Environment,
    subjects: dict[str, str],
    now_us: int,
) -> None:
    """Count one sign-in try per subject, committed before the password is checked;
    refuse when any subject is over its limit."""
    limits = {THROTTLE_EMAIL: settings.console_signin_attempts,
              THROTTLE_ADDRESS: settings.console_signin_ip_attempts}  # fmt: skip
    window = settings.console_signin_window_seconds * 1_000_000
    refused_until = 0
    async with database.transaction() as conn:
        for kind, subject in subjects.items():
            taken = await throttles.take(
                conn,
                environment=environment,
                kind=kind,
                subject=subject,
                window_us=window,
                now_us=now_us,
            )
            if taken.hits > limits[kind]:
                refused_until = max(refused_until, taken.window_ends)
    if refused_until:
        raise SignInRefused("throttled", max(1, (refused_until - now_us + 999_999) // 1_000_000))


async def _open_session(
    conn: Connection,
    *,
    key: bytes,
    settings: Settings,
    environment: Environment,
    user_id: str | None,
    now_us: int,
) -> str:
    token = new_token(SESSION_PREFIX)
    await repository.create_session(
        conn,
        {
            "id": str(uuid.uuid4()),
            "environment": str(environment),
            "token_hash": session_hash(key, token),
            "user_id": user_id,
            "created_at": now_us,
            "expires_at": now_us + settings.console_session_seconds * 1_000_000,
        },
    )
    return token


async def sign_in_operator(
    database: Database,
    *,
    settings: Settings,
    key: bytes,
    environment: Environment,
    admin_token: str,
    address: str,
    now_us: int,
) -> SignedIn:
    """The operator: the admin token, compared in constant time with its stored hash.
    Counted per client address only: the token has 256 bits, and a per-operator count
    would let anyone lock the operator out."""
    await _count_try(
        database,
        settings=settings,
        key=key,
        environment=environment,
        subjects={THROTTLE_ADDRESS: address_subject(key, address)},
        now_us=now_us,
    )
    expected = current_admin_token_sha256(settings)
    ok = (
        bool(admin_token)
        and expected is not None
        and same(sha256_hex(admin_token.strip()), expected)
    )
    async with database.transaction() as conn:
        if not ok:
            await audit(
                conn,
                environment=environment,
                account_id=None,
                actor=None,
                actor_label=OPERATOR,
                action="signin_failed",
                address=address,
                now_us=now_us,
            )
    if not ok:
        raise SignInRefused("wrong")
    async with database.transaction() as conn:
        token = await _open_session(
            conn, key=key, settings=settings, environment=environment, user_id=None, now_us=now_us
        )
        await audit(
            conn,
            environment=environment,
            account_id=None,
            actor=OPERATOR,
            actor_label=OPERATOR,
            action="signin",
            address=address,
            now_us=now_us,
        )
    return SignedIn(token, None)


async def sign_in_user(
    database: Database,
    *,
    settings: Settings,
    key: bytes,
    environment: Environment,
    email: str,
    password: str,
    address: str,
    now_us: int,
) -> SignedIn:
    email = normal_email(email)[:320]
    await _count_try(
        database,
        settings=settings,
        key=key,
        environment=environment,
        subjects={THROTTLE_EMAIL: email, THROTTLE_ADDRESS: address_subject(key, address)},
        now_us=now_us,
    )
    user = await repository.get_user_by_email(database.reader, environment, email)
    usable = user is not None and user.disabled_at is None
    ok = await verify_password(
        user.password_hash if usable and user else None, password[:MAX_PASSWORD]
    )
    if not ok or user is None:
        async with database.transaction() as conn:
            await audit(
                conn,
                environment=environment,
                account_id=user.account_id if user else None,
                actor=None,
                actor_label=email,
                action="signin_failed",
                target=user.id if user else None,
                address=address,
                now_us=now_us,
            )
        raise SignInRefused("wrong")
    async with database.transaction() as conn:
        # A success clears the address's count: its owner knows the password.
        await throttles.forget(conn, environment=environment, kind=THROTTLE_EMAIL, subject=email)
        token = await _open_session(
            conn,
            key=key,
            settings=settings,
            environment=environment,
            user_id=user.id,
            now_us=now_us,
        )
        await audit(
            conn,
            environment=environment,
            account_id=user.account_id,
            actor=user.id,
            actor_label=user.email,
            action="signin",
            target=user.id,
            address=address,
            now_us=now_us,
        )
    if hasher().check_needs_rehash(user.password_hash):
        async with database.transaction() as conn:
            new_hash = await asyncio.to_thread(hash_password, password)
            await repository.update_user(conn, user.id, {"password_hash": new_hash})
    return SignedIn(token, user)


# ---------------------------------------------------------------------- audit log


async def audit(
    conn: Connection,
    *,
    environment: Environment,
    account_id: str | None,
    actor: str | None,
    actor_label: str | None,
    action: str,
    now_us: int,
    target: str | None = None,
    detail: dict[str, Any] | None = None,
    address: str | None = None,
) -> None:
    """One entry of the audit log, in the caller's transaction (the change and its
    record commit together). `detail` never holds a secret."""
    await repository.create_audit_entry(
        conn,
        {
            "id": str(uuid.uuid4()),
            "environment": str(environment),
            "account_id": account_id,
            "actor": actor,
            "actor_label": actor_label,
            "action": action,
            "target": target,
            "detail": orjson.dumps(detail or {}).decode(),
            "address": address,
            "created_at": now_us,
        },
    )


# -------------------------------------------------------------- single-use links


def link_url(settings: Settings, environment: Environment, token: str) -> str:
    return f"{public_base_url(settings, environment)}{CONSOLE_PATH}/link/{token}"


async def create_link(
    conn: Connection,
    *,
    settings: Settings,
    key: bytes,
    environment: Environment,
    account_id: str,
    kind: str,
    email: str,
    role: str,
    created_by: str,
    now_us: int,
    user_id: str | None = None,
) -> tuple[Invitation, str]:
    """An invitation (`kind` INVITE) or a password reset link (RESET): the row, and the
    link's URL (its token is only in the URL; the row keeps its hash)."""
    await apps_service.get_account(conn, environment=environment, account_id=account_id)
    email = validate_email(email)
    role = validate_role(role)
    if kind == INVITE:
        existing = await repository.get_user_by_email(conn, environment, email)
        if existing is not None:
            raise ApiError(409, "email: this address already has a user", source="email")
    seconds = (
        settings.console_invitation_seconds if kind == INVITE else settings.console_reset_seconds
    )
    token = new_token(LINK_PREFIX)
    invitation_id = str(uuid.uuid4())
    expires_at = now_us + seconds * 1_000_000
    values: dict[str, Any] = {
        "id": invitation_id,
        "environment": str(environment),
        "account_id": account_id,
        "kind": kind,
        "email": email,
        "role": role,
        "user_id": user_id,
        "created_by": created_by,
        "created_at": now_us,
        "expires_at": expires_at,
        "token_hash": link_hash(key, token),
    }
    await repository.create_invitation(conn, values)
    invitation = Invitation(
        invitation_id, environment, account_id, kind, email, role, user_id, created_by, now_us,
        expires_at, None,
    )  # fmt: skip
    return invitation, link_url(settings, environment, token)


async def open_link(
    conn: Connection, *, key: bytes, environment: Environment, token: str, now_us: int
) -> Invitation | None:
    if not token.startswith(LINK_PREFIX) or len(token) > 200:
        return None
    return await repository.get_open_invitation(conn, environment, link_hash(key, token), now_us)


async def use_link(
    database: Database,
    *,
    key: bytes,
    environment: Environment,
    token: str,
    password: str,
    confirm: str,
    address: str,
    now_us: int,
) -> User:
    """Set the password through a link: an invitation creates the user, a reset
    replaces the password and ends the user's sessions. The link works once."""
    validate_password(password, confirm)
    new_hash = await asyncio.to_thread(hash_password, password)
    async with database.transaction() as conn:
        invitation = await open_link(
            conn, key=key, environment=environment, token=token, now_us=now_us
        )
        if invitation is None or not await repository.consume_invitation(
            conn, invitation.id, now_us
        ):
            raise ApiError(404, "link: used, expired or unknown", source="link")
        if invitation.kind == INVITE:
            if await repository.get_user_by_email(conn, environment, invitation.email) is not None:
                raise ApiError(409, "email: this address already has a user", source="email")
            user = User(
                str(uuid.uuid4()), environment, invitation.account_id, invitation.email,
                new_hash, invitation.role, now_us, None,
            )  # fmt: skip
            await repository.create_user(conn, user)
            action = "invitation_accepted"
        else:
            found = await repository.get_user_in_account(
                conn, environment, invitation.account_id, invitation.user_id or ""
            )
            if found is None or found.disabled_at is not None:
                raise ApiError(404, "link: the user no longer exists", source="link")
            await repository.update_user(conn, found.id, {"password_hash": new_hash})
            await repository.end_sessions_of_user(conn, found.id, now_us)
            user = found
            action = "password_reset"
        await audit(
            conn,
            environment=environment,
            account_id=user.account_id,
            actor=user.id,
            actor_label=user.email,
            action=action,
            target=user.id,
            detail={"role": user.role},
            address=address,
            now_us=now_us,
        )
    return user


# ---------------------------------------------------------------------- e-mail


def send_mail(settings: Settings, *, to: str, subject: str, body: str) -> None:
    """Send one plain-text message through `smtp_url` (blocking: run it in a thread)."""
    assert settings.smtp_url is not None
    parts = urlsplit(settings.smtp_url)
    host = parts.hostname or "localhost"
    message = EmailMessage()
    message["From"] = settings.smtp_from
    message["To"] = to
    message["Subject"] = subject
    message.set_content(body)
    context = ssl.create_default_context()
    if parts.scheme == "smtps":
        client: smtplib.SMTP = smtplib.SMTP_SSL(
            host, parts.port or 465, timeout=15, context=context
        )
    else:
        client = smtplib.SMTP(host, parts.port or 25, timeout=15)
    with client:
        client.ehlo()
        if parts.scheme == "smtp" and client.has_extn("starttls"):
            client.starttls(context=context)
            client.ehlo()
        if parts.username:
            client.login(unquote(parts.username), unquote(parts.password or ""))
        client.send_message(message)


async def mail_link(
    settings: Settings, invitation: Invitation, url: str, *, account_name: str
) -> bool:
    """E-mail a link when `smtp_url` is set. True when sent; a failure is logged and the
    link stays on screen (the person who made it can pass it on)."""
    if not settings.smtp_url:
        return False
    if invitation.kind == INVITE:
        subject = f"Your invitation to {account_name} (autoport console)"
        body = (
            f"You were invited to the account {account_name} as {invitation.role}.\n\n"
            f"Choose your password here (the link works once):\n{url}\n"
        )
    else:
        subject = "Reset your autoport console password"
        body = f"Choose a new password here (the link works once):\n{url}\n"
    try:
        await asyncio.to_thread(
            send_mail, settings, to=invitation.email, subject=subject, body=body
        )
    except (OSError, smtplib.SMTPException) as error:
        log.warning("console e-mail not sent", error=f"{type(error).__name__}: {error}")
        return False
    return True


async def make_link(
    database: Database,
    *,
    settings: Settings,
    key: bytes,
    environment: Environment,
    account_id: str,
    kind: str,
    email: str,
    role: str,
    actor: str,
    actor_label: str,
    address: str,
    now_us: int,
    user_id: str | None = None,
) -> NewLink:
    """Make a link (recorded in the audit log) and e-mail it when SMTP is set."""
    async with database.transaction() as conn:
        invitation, url = await create_link(
            conn, settings=settings, key=key, environment=environment, account_id=account_id,
            kind=kind, email=email, role=role, created_by=actor, now_us=now_us, user_id=user_id,
        )  # fmt: skip
        await audit(
            conn,
            environment=environment,
            account_id=account_id,
            actor=actor,
            actor_label=actor_label,
            action="invitation_created" if kind == INVITE else "reset_created",
            target=invitation.id,
            detail={"email": invitation.email, "role": invitation.role},
            address=address,
            now_us=now_us,
        )
        account = await apps_service.get_account(
            conn, environment=environment, account_id=account_id
        )
    emailed = await mail_link(settings, invitation, url, account_name=account.name)
    return NewLink(invitation, url, emailed)


# ----------------------------------------------------------------------- users


async def change_user(
    conn: Connection,
    *,
    environment: Environment,
    account_id: str,
    user_id: str,
    role: str | None = None,
    disable: bool = False,
    now_us: int,
) -> User:
    """Change a user's role or remove the user (sessions end at once). An account keeps
    at least one owner."""
    user = await repository.get_user_in_account(conn, environment, account_id, user_id)
    if user is None or user.disabled_at is not None:
        raise ApiError(404, f"no user {user_id!r} in this account", source="user_id")
    values: dict[str, Any] = {}
    if role is not None:
        values["role"] = validate_role(role)
    if disable:
        values["disabled_at"] = now_us
    losing_owner = user.role == OWNER and (disable or values.get("role", OWNER) != OWNER)
    if losing_owner and await repository.count_owners(conn, environment, account_id) <= 1:
        raise ApiError(409, "role: an account keeps at least one owner", source="role")
    if values:
        await repository.update_user(conn, user.id, values)
    if disable:
        # Sessions carry no role (it is read per request); a removed user's end now.
        await repository.end_sessions_of_user(conn, user.id, now_us)
    found = await repository.get_user_in_account(conn, environment, account_id, user_id)
    assert found is not None
    return found


# ------------------------------------------------------------------ live views


async def newest_stream_messages(
    conn: Connection, *, environment: Environment, application_id: str, limit: int
) -> list[dict[str, object]]:
    """The application's newest stream messages, newest first (the Streaming page)."""
    logged = await streaming_service.latest_messages(
        conn, environment=environment, application_id=application_id, limit=limit
    )
    return [{"seq": m.seq, "message": m.message, "ingested_at": m.ingested_at} for m in logged]


async def stream_head(conn: Connection, *, environment: Environment, application_id: str) -> int:
    """The sequence number of the application's newest retained stream message (0:
    none)."""
    newest = await streaming_service.latest_messages(
        conn, environment=environment, application_id=application_id, limit=1
    )
    return newest[0].seq if newest else 0


async def mqtt_issued_at(conn: Connection, application_id: str) -> int | None:
    """When the application's MQTT password was issued (None: never)."""
    return await streaming_service.mqtt_issued_at(conn, application_id)


# ------------------------------------------------- reads the console's pages make
# (routes never call a repository: these are the pages' way to the rows)


async def get_live_session(
    conn: Connection, environment: Environment, key: bytes, token: str, now_us: int
) -> SessionRow | None:
    """The running session of a cookie's token, with its user (None: signed out,
    expired, or the user disabled)."""
    return await repository.get_live_session(conn, environment, session_hash(key, token), now_us)


def _flash_key(key: bytes) -> bytes:
    return derive_key(key, b"autoport console flash")


async def set_flash(
    conn: Connection, *, key: bytes, session_id: str, page: str, data: dict[str, Any], now_us: int
) -> None:
    """What `page` must show once to this session, sealed (it may hold a new secret)."""
    sealed = seal(_flash_key(key), orjson.dumps(data), context=f"{session_id}:{page}".encode())
    await repository.upsert_flash(
        conn, session_id=session_id, page=page, sealed=sealed, now_us=now_us
    )


async def take_flash(
    conn: Connection, *, key: bytes, session_id: str, page: str
) -> dict[str, Any] | None:
    """The session's flash for `page`, once (None: none, or it no longer opens)."""
    sealed = await repository.consume_flash(conn, session_id=session_id, page=page)
    if sealed is None:
        return None
    plain = unseal(_flash_key(key), sealed, context=f"{session_id}:{page}".encode())
    data = None if plain is None else orjson.loads(plain)
    return data if isinstance(data, dict) else None


async def end_session(conn: Connection, session_id: str, now_us: int) -> None:
    await repository.end_session(conn, session_id, now_us)


async def get_webhook(
    conn: Connection, environment: Environment, application_id: str
) -> WebhookRow | None:
    return await webhooks_service.find_webhook(conn, environment, application_id)


async def list_users_of_account(
    conn: Connection, environment: Environment, account_id: str
) -> list[User]:
    return await repository.list_users_of_account(conn, environment, account_id)


async def get_user_in_account(
    conn: Connection, environment: Environment, account_id: str, user_id: str
) -> User | None:
    return await repository.get_user_in_account(conn, environment, account_id, user_id)


async def list_pending_invitations(
    conn: Connection, environment: Environment, account_id: str, now_us: int
) -> list[Invitation]:
    return await repository.list_pending_invitations(conn, environment, account_id, now_us)


async def withdraw_invitation(
    conn: Connection, environment: Environment, account_id: str, invitation_id: str, now_us: int
) -> bool:
    return await repository.withdraw_invitation(
        conn, environment, account_id, invitation_id, now_us
    )


async def list_audit_entries(
    conn: Connection,
    environment: Environment,
    *,
    account_id: str | None,
    limit: int,
    before: tuple[int, str] | None = None,
) -> list[AuditEntry]:
    return await repository.list_audit_entries(
        conn, environment, account_id=account_id, limit=limit, before=before
    )


async def delete_finished_sessions(conn: Connection, before_us: int) -> int:
    return await repository.delete_finished_sessions(conn, before_us)
