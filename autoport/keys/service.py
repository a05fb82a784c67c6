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
"""

from __future__ import annotations

from collections.abc import Callable

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
    were re-sealed and the applications whose secret opens under no accepted key."""
    opening = tuple(derive_key(key) for key in keyring.accepted)
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
