"""Rotating the deployment's keys and re-sealing what was sealed with the old one.

Sealed values (AES-256-GCM) under keys derived from `token_hmac_key`:
- webhook secrets (autoport.webhooks.sealing): kept for as long as the webhook exists, so
  they are re-sealed with the new key here, in batches, each its own short transaction;
- the successor pair of a consumed refresh token (autoport.oauth.service): readable for
  the refresh grace window only (seconds) and sealed with a key derived from the refresh
  token too, so it cannot be re-sealed; it opens under the previous key meanwhile.
Keyed hashes (tokens, provider secrets, consent sessions) cannot be re-hashed without the
plaintext: they verify under the previous key until the window ends (provider secrets,
which never expire, are re-hashed on their next use).

A previous key's material is deleted only after every webhook secret was re-sealed under
the current key (`reseal_then_forget`), so a rotation that cuts keys at once (after a
leak) loses no secret; `check_webhook_secrets` lets a rotation refuse, changing nothing,
when some secret already opens under no key it knows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from autoport.config import Settings
from autoport.kit import keyring as keyrings
from autoport.kit.db import Database
from autoport.kit.keyring import Keyring
from autoport.webhooks.sealing import SealError, derive_key, seal, unseal_any

RESEAL_BATCH = 200

_PAGE = (
    "SELECT application_id, secret_sealed FROM webhooks WHERE application_id > :after "
    "ORDER BY application_id LIMIT :limit"
)
# Only if nobody changed the secret meanwhile (a concurrent save wins: it is sealed
# with the current key already).
_RESEAL = (
    "UPDATE webhooks SET secret_sealed = :new "
    "WHERE application_id = :application_id AND secret_sealed = :old"
)


async def reseal_webhook_secrets(
    db: Database, keyring: Keyring, *, progress: Callable[[str], None], batch: int = RESEAL_BATCH
) -> tuple[int, list[str]]:
    """Re-seal every webhook secret with the keyring's current key; returns how many
    were re-sealed and the applications whose secret opens under no key of the ring
    (accepted or retained)."""
    opening = tuple(derive_key(key) for key in keyring.openers)
    sealing = derive_key(keyring.current)
    after, done, unopenable = "", 0, []
    while True:
        rows = await db.fetch_all(_PAGE, {"after": after, "limit": batch})
        if not rows:
            break
        updates = []
        for row in rows:
            application_id, sealed = row["application_id"], row["secret_sealed"]
            try:
                secret = unseal_any(opening, sealed, application_id=application_id)
            except SealError:
                unopenable.append(application_id)
                continue
            try:
                unseal_any((sealing,), sealed, application_id=application_id)
                continue  # sealed with the current key already
            except SealError:
                pass
            updates.append(
                {
                    "application_id": application_id,
                    "old": sealed,
                    "new": seal(sealing, secret, application_id=application_id),
                }
            )
        if updates:
            async with db.transaction() as conn:
                for update in updates:
                    done += await conn.execute(_RESEAL, update)
        after = rows[-1]["application_id"]
        progress(f"re-sealed {done} webhook secret(s) so far")
    return done, unopenable


async def check_webhook_secrets(db: Database, keyring: Keyring) -> list[str]:
    """The applications whose webhook secret opens under no key of `keyring` (accepted
    or retained): what a re-sealing would lose."""
    opening = tuple(derive_key(key) for key in keyring.openers)
    after, unopenable = "", list[str]()
    while True:
        rows = await db.fetch_all(_PAGE, {"after": after, "limit": RESEAL_BATCH})
        if not rows:
            return unopenable
        for row in rows:
            try:
                unseal_any(opening, row["secret_sealed"], application_id=row["application_id"])
            except SealError:
                unopenable.append(row["application_id"])
        after = rows[-1]["application_id"]


@dataclass(frozen=True)
class Resealed:
    resealed: int
    unopenable: list[str]
    # Ids of the previous keys whose material was deleted.
    forgotten: tuple[str, ...]


# A webhook saved by a process that read the keyring just before a rotation may commit
# its secret, sealed under the retired key, after the first pass went by it: the next pass
# re-seals it. Two passes normally suffice; the third is spare.
RESEAL_PASSES = 3


async def reseal_then_forget(
    db: Database, settings: Settings, *, progress: Callable[[str], None]
) -> Resealed:
    """Re-seal every webhook secret under token_hmac_key's current key, then delete the
    material of the previous keys no longer accepted, once a pass found nothing left to
    re-seal. Nothing is deleted while some secret opens under no key (it stays
    unopenable either way) or is still sealed under another key."""
    done = 0
    for _ in range(RESEAL_PASSES):
        ring = keyrings.current_keyring(settings, "token_hmac_key")
        count, unopenable = await reseal_webhook_secrets(db, ring, progress=progress)
        done += count
        if unopenable:
            return Resealed(done, unopenable, ())
        if count == 0:
            forgotten = keyrings.forget_retired(settings, "token_hmac_key", current=ring.current)
            return Resealed(done, [], forgotten)
    return Resealed(done, [], ())
