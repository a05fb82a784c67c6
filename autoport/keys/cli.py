"""`autoport keys rotate|show|reseal`: key rotation without logging anyone out
(docs/operations.md, Key rotation)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from autoport.config import SECRETS_FILE_NAME, Settings, rotate_admin_token
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


def _unopenable_note(applications: list[str]) -> str:
    return (
        "these applications' webhook secrets open under no key in secrets.json (a key "
        "was changed or deleted by hand?): save their webhooks with a new secret "
        "(`autoport webhooks set APP --url URL --secret NEW`), then run this again: "
        + ", ".join(applications)
    )


def _reseal(settings: Settings) -> dict[str, Any]:
    from autoport.keys.service import reseal_then_forget

    async def work(db: Database, filled: Settings) -> dict[str, Any]:
        done = await reseal_then_forget(db, filled, progress=note)
        return {
            "webhook_secrets_resealed": done.resealed,
            "webhook_secrets_unopenable": done.unopenable,
            "forgotten": list(done.forgotten),
        }

    result = run(work, secrets=True, settings=settings)
    if result["webhook_secrets_unopenable"]:
        fail(_unopenable_note(result["webhook_secrets_unopenable"]))
    return result


def _rotate_keys(
    settings: Settings, names: Sequence[str], *, window: float, keep: frozenset[str]
) -> list[dict[str, Any]]:
    rotated: list[dict[str, Any]] = []
    for name in keyring.ROTATABLE:
        if name not in names:
            continue
        try:
            done = keyring.rotate(settings, name, window_seconds=window, keep=keep)
        except ValueError as error:
            fail(str(error), ExitCode.usage)
        rotated.append(
            {
                "name": name,
                "new_id": done.new_id,
                "old_id": done.old_id,
                "old_accepted_until": _iso(done.old_accepted_until),
                "cut": list(done.cut),
                "kept": list(done.kept),
                "dropped": list(done.dropped),
            }
        )
    return rotated


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
            help="How long the old keys are still accepted: the one replaced now and, at "
            "most, every earlier one (default: the refresh-token lifetime, so nobody is "
            "logged out; 0 after a leak: every previous key is refused at once).",
        ),
    ] = None,
    keep: Annotated[
        list[str] | None,
        typer.Option(
            "--keep",
            help="The id of a previous key (see `keys show`) whose window stays as it is "
            "(repeatable): one known not to have leaked.",
        ),
    ] = None,
    reseal: Annotated[
        bool,
        typer.Option(
            "--reseal/--no-reseal",
            help="Re-seal webhook secrets with the new key now (--no-reseal: later, with "
            "`keys reseal`, once every host has the new secrets.json; the old keys are "
            "kept until then, to open them and for nothing else).",
        ),
    ] = True,
    as_json: JsonOption = False,
) -> None:
    """Make new keys; the old ones verify for a window; running servers follow at once.

    With token_hmac_key, every webhook secret is first checked to open under a key of
    secrets.json: if one does not, nothing is changed (exit code 1). Old keys are
    deleted only once every webhook secret is re-sealed under the new key."""
    names = [name.strip() for name in which.split(",") if name.strip()]
    unknown = [name for name in names if name not in WHICH]
    if unknown or not names:
        fail(
            f"--which: {', '.join(unknown) or 'nothing'} is not one of {', '.join(WHICH)}",
            ExitCode.usage,
        )
    settings = load_settings()
    require_data_dir(settings)
    filled = with_secrets(settings)  # refuses a data directory without secrets
    if "admin_token" in names and settings.admin_token is not None:
        fail("the admin token comes from AUTOPORT_ADMIN_TOKEN; change it there", ExitCode.usage)
    window = settings.oauth_refresh_token_seconds if window_seconds is None else window_seconds
    kept = frozenset(keep or ())
    keepable = {
        key
        for name in keyring.ROTATABLE
        if name in names
        for key in keyring.accepted_previous_ids(filled, name)
    }
    if kept - keepable:
        fail(
            f"--keep: {', '.join(sorted(kept - keepable))} is not a previous key still "
            f"accepted of {', '.join(n for n in names if n in keyring.ROTATABLE) or 'any key'} "
            f"(those: {', '.join(sorted(keepable)) or 'none'}; `autoport keys show`)",
            ExitCode.usage,
        )
    rotating = [name for name in keyring.ROTATABLE if name in names]
    data: dict[str, Any] = {}
    if "token_hmac_key" in names:
        from autoport.keys.service import check_webhook_secrets, reseal_then_forget

        async def work(db: Database, ready: Settings) -> dict[str, Any]:
            # Before anything changes: a secret no key opens now would be lost for good
            # once the keys are deleted, so refuse instead.
            unopenable = await check_webhook_secrets(
                db, keyring.current_keyring(ready, "token_hmac_key")
            )
            if unopenable:
                fail("refused, nothing changed: " + _unopenable_note(unopenable))
            result: dict[str, Any] = {
                "rotated": _rotate_keys(settings, rotating, window=window, keep=kept)
            }
            if reseal:
                done = await reseal_then_forget(db, ready, progress=note)
                result |= {
                    "webhook_secrets_resealed": done.resealed,
                    "webhook_secrets_unopenable": done.unopenable,
                    "forgotten": list(done.forgotten),
                }
            return result

        data = run(work, secrets=True, settings=settings)
        if data.get("webhook_secrets_unopenable"):
            # Only a secret saved meanwhile by hand could get here; the old keys are kept.
            fail(_unopenable_note(data["webhook_secrets_unopenable"]))
    else:
        data["rotated"] = _rotate_keys(settings, rotating, window=window, keep=kept)
    if "admin_token" in names:
        data["admin_token"] = rotate_admin_token(settings)
    data["accepted"] = {name: _accepted(filled, name) for name in rotating}

    def text(d: dict[str, Any]) -> str:
        lines = []
        for r in d["rotated"]:
            lines.append(
                f"{r['name']}: {r['old_id']} -> {r['new_id']} (old key accepted until "
                f"{r['old_accepted_until']})"
            )
            if r["cut"]:
                lines.append(f"  earlier keys refused from now on: {', '.join(r['cut'])}")
            if r["kept"]:
                lines.append(f"  earlier keys kept as they were: {', '.join(r['kept'])}")
        if "webhook_secrets_resealed" in d:
            lines.append(f"webhook secrets re-sealed: {d['webhook_secrets_resealed']}")
        elif "token_hmac_key" in names:
            lines.append(
                "webhook secrets not re-sealed: run `autoport keys reseal` once every host "
                "has the new secrets.json (the old keys are kept until then)"
            )
        for name, accepted in d["accepted"].items():
            lines.append(f"{name} now accepts: {_accepted_text(accepted)}")
        if "admin_token" in d:
            lines.append(f"admin token (shown once): {d['admin_token']}")
        return "\n".join(lines)

    output(data, as_json, text)


def _accepted(settings: Settings, name: keyring.Rotatable) -> list[dict[str, Any]]:
    """The keys of `name` accepted now: the current one first, then each previous key
    with the end of its window."""
    stored = keyring.stored_file(settings.data_dir)
    ring = keyring.current_keyring(settings, name)
    accepted: list[dict[str, Any]] = [{"id": keyring.key_id(ring.current), "until": None}]
    now = time.time()
    for entry in keyring.previous_entries(stored, name):
        if entry.get("key") and float(entry.get("until", 0)) > now:
            accepted.append({"id": entry.get("id"), "until": _iso(float(entry["until"]))})
    return accepted


def _accepted_text(accepted: list[dict[str, Any]]) -> str:
    if len(accepted) == 1:
        return f"only the current key {accepted[0]['id']}"
    return f"the current key {accepted[0]['id']}, and " + ", ".join(
        f"{entry['id']} until {entry['until']}" for entry in accepted[1:]
    )


@app.command("show")
def show(as_json: JsonOption = False) -> None:
    """What each keyring accepts now: the current key's id, every previous key still
    accepted and until when, and the previous keys refused (never the keys)."""
    settings = with_secrets(load_settings())
    now = time.time()
    data: dict[str, Any] = {}
    stored = keyring.stored_file(settings.data_dir)
    for name in keyring.ROTATABLE:
        ring = keyring.current_keyring(settings, name)
        from_file = ring.current == str(stored.get(name, "")).encode()
        data[name] = {
            "current": keyring.key_id(ring.current),
            "source": SECRETS_FILE_NAME if from_file else f"AUTOPORT_{name.upper()}",
            "accepted": [entry["id"] for entry in _accepted(settings, name)]
            if from_file
            else [keyring.key_id(ring.current)],
            "previous": [
                {
                    "id": entry.get("id"),
                    "accepted_until": _iso(float(entry.get("until", 0))),
                    "accepted": from_file
                    and bool(entry.get("key"))
                    and float(entry.get("until", 0)) > now,
                    # Refused, but kept to open webhook secrets not yet re-sealed.
                    "key_kept": bool(entry.get("key")),
                }
                for entry in keyring.previous_entries(stored, name)
            ],
        }
    data["admin_token"] = {
        "accepted": "the current admin token only (a rotation replaces it at once)"
    }

    def text(d: dict[str, Any]) -> str:
        lines = []
        for name in keyring.ROTATABLE:
            ring = d[name]
            accepted = ring["accepted"]
            count = "1 key" if len(accepted) == 1 else f"{len(accepted)} keys"
            lines.append(
                f"{name}: accepts {count}: the current key {ring['current']} "
                f"(from {ring['source']})"
            )
            for entry in ring["previous"]:
                if entry["accepted"]:
                    state = f"ACCEPTED until {entry['accepted_until']}"
                elif entry["key_kept"]:
                    state = (
                        f"refused since {entry['accepted_until']}; the key is kept only to "
                        "open webhook secrets sealed under it: `autoport keys reseal` "
                        "re-seals them and deletes it"
                    )
                else:
                    state = f"refused since {entry['accepted_until']}; the key is deleted"
                lines.append(f"  previous {entry['id']}: {state}")
        lines.append(f"admin_token: accepts {d['admin_token']['accepted']}")
        return "\n".join(lines)

    output(data, as_json, text)


@app.command("reseal")
def reseal_command(as_json: JsonOption = False) -> None:
    """Re-seal every webhook secret with the current token_hmac_key (after
    `keys rotate --no-reseal`, once every host has the new secrets.json), then delete
    the previous keys no longer accepted."""
    settings = load_settings()
    require_data_dir(settings)
    data = _reseal(settings)

    def text(d: dict[str, Any]) -> str:
        line = f"webhook secrets re-sealed: {d['webhook_secrets_resealed']}"
        if d["forgotten"]:
            line += f"; refused keys deleted: {', '.join(d['forgotten'])}"
        return line

    output(data, as_json, text)
