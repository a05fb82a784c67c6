"""`autoport keys rotate|show|reseal`: key rotation without logging anyone out
(docs/operations.md, Key rotation)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from autoport.config import Settings, rotate_admin_token
from autoport.kit import keyring
from autoport.kit.cli import (
    ExitCode,
    JsonOption,
    fail,
    load_settings,
    note,
    output,
    require_data_dir,
    run,
    with_secrets,
)
from autoport.kit.db import Database

app = typer.Typer(help="Key rotation: token_hmac_key, session_secret, the admin token.")

WHICH = (*keyring.ROTATABLE, "admin_token")


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def _reseal(settings: Settings) -> dict[str, Any]:
    # Sealed with keys derived from token_hmac_key: webhook secrets (re-sealed here);
    # a consumed refresh token's successor pair lives seconds and opens under the
    # previous key meanwhile; keyed hashes verify under it until its window ends.
    from autoport.webhooks.service import reseal_webhook_secrets

    async def work(db: Database, filled: Settings) -> dict[str, Any]:
        ring = keyring.current_keyring(filled, "token_hmac_key")
        done, unopenable = await reseal_webhook_secrets(db, ring, progress=note)
        return {"webhook_secrets_resealed": done, "webhook_secrets_unopenable": unopenable}

    result = run(work, secrets=True, settings=settings)
    if result["webhook_secrets_unopenable"]:
        note(
            "warning: these applications' webhook secrets open under no accepted key (a key "
            "was changed by hand?); save their webhooks with a new secret: "
            + ", ".join(result["webhook_secrets_unopenable"])
        )
    return result


@app.command("rotate")
def rotate(
    which: Annotated[
        str,
        typer.Option(
            "--which",
            help=f"Comma-separated: {', '.join(WHICH)}.",
        ),
    ] = "token_hmac_key,session_secret",
    window_seconds: Annotated[
        float | None,
        typer.Option(
            "--window-seconds",
            min=0,
            help="How long the old key is still accepted (default: the refresh-token "
            "lifetime, so nobody is logged out; 0 after a leak).",
        ),
    ] = None,
    reseal: Annotated[
        bool,
        typer.Option(
            "--reseal/--no-reseal",
            help="Re-seal webhook secrets with the new key now (--no-reseal: later, with "
            "`keys reseal`, once every host has the new secrets.json).",
        ),
    ] = True,
    as_json: JsonOption = False,
) -> None:
    """Make new keys; the old ones verify for a window; running servers follow at once."""
    names = [name.strip() for name in which.split(",") if name.strip()]
    unknown = [name for name in names if name not in WHICH]
    if unknown or not names:
        fail(
            f"--which: {', '.join(unknown) or 'nothing'} is not one of {', '.join(WHICH)}",
            ExitCode.usage,
        )
    settings = load_settings()
    require_data_dir(settings)
    with_secrets(settings)  # refuses a data directory without secrets
    window = settings.oauth_refresh_token_seconds if window_seconds is None else window_seconds
    rotated: list[dict[str, Any]] = []
    for name in keyring.ROTATABLE:
        if name not in names:
            continue
        try:
            done = keyring.rotate(settings, name, window_seconds=window)
        except ValueError as error:
            fail(str(error), ExitCode.usage)
        until = _iso(done.old_accepted_until)
        note(f"{name}: new key {done.new_id}; {done.old_id} accepted until {until}")
        rotated.append(
            {
                "name": name,
                "new_id": done.new_id,
                "old_id": done.old_id,
                "old_accepted_until": _iso(done.old_accepted_until),
                "dropped": list(done.dropped),
            }
        )
    data: dict[str, Any] = {"rotated": rotated}
    if "token_hmac_key" in names and reseal:
        data |= _reseal(settings)
    if "admin_token" in names:
        if settings.admin_token is not None:
            fail("the admin token comes from AUTOPORT_ADMIN_TOKEN; change it there", ExitCode.usage)
        data["admin_token"] = rotate_admin_token(settings)

    def text(d: dict[str, Any]) -> str:
        lines = [
            f"{r['name']}: {r['old_id']} -> {r['new_id']} (old accepted until "
            f"{r['old_accepted_until']})"
            for r in d["rotated"]
        ]
        if "webhook_secrets_resealed" in d:
            lines.append(f"webhook secrets re-sealed: {d['webhook_secrets_resealed']}")
        if "admin_token" in d:
            lines.append(f"admin token (shown once): {d['admin_token']}")
        return "\n".join(lines)

    output(data, as_json, text)


@app.command("show")
def show(as_json: JsonOption = False) -> None:
    """The key ids of each keyring and until when the previous keys are accepted (never
    the keys)."""
    settings = with_secrets(load_settings())
    now = time.time()
    data: dict[str, Any] = {}
    stored = keyring.stored_file(settings.data_dir)
    for name in keyring.ROTATABLE:
        ring = keyring.current_keyring(settings, name)
        data[name] = {
            "current": keyring.key_id(ring.current),
            "previous": [
                {
                    "id": entry.get("id"),
                    "accepted_until": _iso(float(entry.get("until", 0))),
                    "accepted": bool(entry.get("key")) and float(entry.get("until", 0)) > now,
                }
                for entry in keyring.previous_entries(stored, name)
            ],
        }

    def text(d: dict[str, Any]) -> str:
        lines = []
        for name, ring in d.items():
            lines.append(f"{name}: current {ring['current']}")
            for entry in ring["previous"]:
                state = "accepted" if entry["accepted"] else "no longer accepted"
                lines.append(f"  previous {entry['id']}: {state} (until {entry['accepted_until']})")
        return "\n".join(lines)

    output(data, as_json, text)


@app.command("reseal")
def reseal_command(as_json: JsonOption = False) -> None:
    """Re-seal every webhook secret with the current token_hmac_key (after
    `keys rotate --no-reseal`, once every host has the new secrets.json)."""
    settings = load_settings()
    require_data_dir(settings)
    data = _reseal(settings)
    output(data, as_json, lambda d: f"webhook secrets re-sealed: {d['webhook_secrets_resealed']}")
