"""Keyrings: the current key of a rotatable secret and the previous keys still accepted.

`token_hmac_key` and `session_secret` rotate (`autoport keys rotate`) without logging
anyone out: the new key signs, hashes and seals from then on, and the previous ones are
still accepted for verification until their window ends (by default the refresh-token
lifetime, so every token issued before the rotation expires before its key is dropped).

In `secrets.json` the current key stays where it always was (`token_hmac_key`), so an
older autoport still reads the file; the previous keys are kept beside it:

    "previous_keys": {"token_hmac_key": [{"id": "3f2a9c1e", "key": "...", "until": 1767225600}]}

An entry past its `until` is no longer accepted for anything. Its key material is kept
only while something sealed under it may remain (`Keyring.retained`, used to open sealed
values and nothing else): `session_secret` seals nothing that outlives a page, so `rotate`
drops such material at once; `token_hmac_key` seals webhook secrets, so its material is
dropped by `forget_retired` once every webhook secret was re-sealed under the current key
(autoport.keys.service). The id stays (so a process started with that key knows it came
from this file). `stable_keys` keeps the first key of each ring: pseudonymous ids derived
from it (the `sub` of a consent) must stay the same across rotations.

A rotation's window caps every previous key of the ring, not only the key it retires: no
key but the current one is accepted beyond `now + window`. `--window-seconds 0` (after a
leak) therefore cuts every previous key at once, except those named to keep.

The interface is narrow on purpose (the current key, the accepted keys, keys by id):
`current_keyring(settings, name)` reads the file again whenever it changed (one stat), so
every process of a deployment sees a rotation on its next use, as the admin token does;
`accepted(key)` answers for code that holds only the key bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from autoport import secrets_file
from autoport.config import Settings
from autoport.secrets_file import SECRETS_FILE_NAME

Rotatable = Literal["token_hmac_key", "session_secret"]
ROTATABLE: tuple[Rotatable, ...] = ("token_hmac_key", "session_secret")
PREVIOUS = "previous_keys"
STABLE = "stable_keys"


def key_id(key: bytes) -> str:
    """A short public name of a key (never enough to guess it)."""
    return hashlib.sha256(b"autoport key id:" + key).hexdigest()[:8]


@dataclass(frozen=True)
class Keyring:
    current: bytes
    # Still accepted for verification, newest first.
    previous: tuple[bytes, ...] = ()
    # The first key of the ring (see the module docstring).
    stable: bytes | None = None
    # Previous keys no longer accepted whose material is kept to open what they sealed
    # until it is re-sealed (see the module docstring): never for verification.
    retained: tuple[bytes, ...] = ()

    @property
    def accepted(self) -> tuple[bytes, ...]:
        return (self.current, *self.previous)

    @property
    def openers(self) -> tuple[bytes, ...]:
        """What may open a sealed value (a webhook secret): the accepted keys, then the
        retained ones."""
        return (*self.accepted, *self.retained)

    def by_id(self, wanted: str) -> bytes | None:
        return next((key for key in self.accepted if key_id(key) == wanted), None)


# Secrets file -> (its identity when read, its content).
_FILES: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}
# Current key -> ((previous key, accepted until), ...) and its stable key, as last read:
# for `accepted` and `stable`, called where only the key bytes are at hand.
_PREVIOUS: dict[bytes, tuple[tuple[bytes, float], ...]] = {}
_STABLE: dict[bytes, bytes] = {}


def _identity(path: str | Path) -> tuple[int, int, int] | None:
    """The secrets file's (inode, mtime, size), None when there is none: what tells a
    rotation (a rewrite) from the file as last read."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def stored_file(data_dir: Path) -> dict[str, Any]:
    path = data_dir / SECRETS_FILE_NAME
    identity = _identity(path)
    if identity is None:
        return {}
    cached = _FILES.get(path)
    if cached is not None and cached[0] == identity:
        return cached[1]
    try:
        content = json.loads(path.read_text())
    except (OSError, ValueError):
        return cached[1] if cached is not None else {}
    if not isinstance(content, dict):
        return {}
    _FILES[path] = (identity, content)
    return content


def previous_entries(stored: dict[str, Any], name: str) -> list[dict[str, Any]]:
    entries = stored.get(PREVIOUS, {}).get(name, [])
    return [entry for entry in entries if isinstance(entry, dict)]


def current_keyring(settings: Settings, name: Rotatable) -> Keyring:
    """The keyring of `name` as it is now.

    The secrets file decides when the configured key is one of its own (the process
    loaded it from there before a rotation); a key given in the environment
    (AUTOPORT_TOKEN_HMAC_KEY) that the file does not know is a keyring of one."""
    return _keyring_until(settings, name)[0]


def _keyring_until(settings: Settings, name: Rotatable) -> tuple[Keyring, float]:
    """The keyring of `name` as it is now, and when it must be built again."""
    configured_secret = getattr(settings, name)
    configured = None if configured_secret is None else configured_secret.get_secret_value()
    stored = stored_file(settings.data_dir)
    file_current = stored.get(name)
    entries = previous_entries(stored, name)
    known_ids = {entry.get("id") for entry in entries}
    retained: tuple[bytes, ...] = ()
    if file_current is not None and (
        configured is None or configured == file_current or key_id(configured.encode()) in known_ids
    ):
        now = time.time()
        current = str(file_current).encode()
        live = tuple(
            (str(entry["key"]).encode(), float(entry["until"]))
            for entry in entries
            if entry.get("key") and float(entry.get("until", 0)) > now
        )
        retained = tuple(
            str(entry["key"]).encode()
            for entry in entries
            if entry.get("key") and float(entry.get("until", 0)) <= now
        )
        stable_text = stored.get(STABLE, {}).get(name)
        stable = str(stable_text).encode() if stable_text else current
    elif configured is not None:
        current, live, stable = configured.encode(), (), configured.encode()
    else:
        raise RuntimeError("secrets were not loaded (config.ensure_secrets)")
    _PREVIOUS[current] = live
    _STABLE[current] = stable
    keyring = Keyring(current, tuple(key for key, _ in live), stable, retained)
    # Built again when the first previous key's window ends (it must stop being accepted
    # then), or when the file changes (LiveKey).
    return keyring, min((until for _, until in live), default=math.inf)


def accepted(key: bytes) -> tuple[bytes, ...]:
    """`key` first, then the previous keys accepted beside it (as last read by
    `current_keyring` in this process; none for a key it never read)."""
    now = time.time()
    return (key, *(old for old, until in _PREVIOUS.get(key, ()) if until > now))


def stable(key: bytes) -> bytes:
    """The first key of `key`'s ring: for ids that must not change with a rotation."""
    return _STABLE.get(key, key)


# How long `LiveKey.recent` reuses a look at the secrets file. The pull's bearer check
# asks for the token key on every request, and the stat was ~2 µs of a ~35 µs pull; at
# 1 ms, a server under load shares one stat among dozens of pulls, and a rotation still
# reaches it sooner than the `keys rotate` command that made it has exited.
RECHECK_SECONDS = 0.001


class LiveKey:
    """A keyring followed on every use, for long-lived holders (the app's token and
    session keys, the webhook worker): each use costs one stat of the secrets file and a
    comparison; the keyring is built again only when the file changed or a previous key's
    window ended. `recent` spares the stat for RECHECK_SECONDS after a look."""

    __slots__ = ("_looked_until", "_path", "_seen", "name", "settings")

    def __init__(self, settings: Settings, name: Rotatable) -> None:
        self.settings = settings
        self.name = name
        self._path = str(settings.data_dir / SECRETS_FILE_NAME)
        # (the file's identity, the keyring built then, when it must be built again)
        self._seen: tuple[tuple[int, int, int] | None, Keyring, float] | None = None
        # (time.monotonic) until when `recent` trusts the last look at the file.
        self._looked_until = 0.0

    def keyring(self) -> Keyring:
        """The keyring as the secrets file holds it now."""
        identity = _identity(self._path)
        self._looked_until = time.monotonic() + RECHECK_SECONDS
        seen = self._seen
        if seen is not None and seen[0] == identity and time.time() < seen[2]:
            return seen[1]
        keyring, until = _keyring_until(self.settings, self.name)
        # Should the file change between the stat and the read, the identity kept is the
        # older one: the next use builds the keyring again, nothing is missed.
        self._seen = (identity, keyring, until)
        return keyring

    def recent(self) -> Keyring:
        """The keyring as the file held it at most RECHECK_SECONDS ago: for checks that
        look again with `keyring` before refusing (autoport.oauth.bearer). A previous
        key's window still ends on time."""
        seen = self._seen
        if seen is not None and time.monotonic() < self._looked_until and time.time() < seen[2]:
            return seen[1]
        return self.keyring()

    @property
    def current(self) -> bytes:
        return self.keyring().current

    @property
    def accepted(self) -> tuple[bytes, ...]:
        return self.keyring().accepted

    @property
    def openers(self) -> tuple[bytes, ...]:
        return self.keyring().openers


# What each ring seals that outlives a rotation: its retired key material is kept until
# that was re-sealed (`forget_retired`). session_secret seals only a page's flash message.
SEALS_LASTING: dict[Rotatable, bool] = {"token_hmac_key": True, "session_secret": False}


@dataclass(frozen=True)
class Rotation:
    name: Rotatable
    old_id: str
    new_id: str
    old_accepted_until: float
    # Previous keys (besides the one retired now) whose window this rotation ended.
    cut: tuple[str, ...]
    # Previous keys named to keep: their windows are unchanged.
    kept: tuple[str, ...]
    # Key material deleted by this rotation (ids).
    dropped: tuple[str, ...]


def accepted_previous_ids(settings: Settings, name: Rotatable) -> list[str]:
    """The ids of the previous keys of `name` accepted now (what `--keep` may name)."""
    now = time.time()
    return [
        str(entry.get("id"))
        for entry in previous_entries(stored_file(settings.data_dir), name)
        if entry.get("key") and float(entry.get("until", 0)) > now
    ]


def rotate(
    settings: Settings,
    name: Rotatable,
    *,
    window_seconds: float,
    keep: frozenset[str] = frozenset(),
) -> Rotation:
    """Make a new current key for `name`. The old one stays accepted for
    `window_seconds`, and so at most does every previous key (0, after a leak: all are
    refused at once), except those whose id is in `keep`, whose windows are unchanged.
    Key material no longer accepted is deleted here unless the ring seals lasting values
    (`SEALS_LASTING`: then `forget_retired` deletes it after the re-sealing). Under the
    secrets lock, so concurrent rotations serialise."""
    if getattr(settings, name) is not None and not _from_file(settings, name):
        raise ValueError(
            f"{name} is given in the configuration (AUTOPORT_{name.upper()}), not in "
            f"{SECRETS_FILE_NAME}: change it there (docs/operations.md, Key rotation)"
        )
    path = settings.data_dir / SECRETS_FILE_NAME
    with secrets_file.locked(settings.data_dir):
        stored: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
        old = stored.get(name)
        if not old:
            raise ValueError(f"{SECRETS_FILE_NAME} holds no {name} yet: start autoport once")
        now = time.time()
        new = secrets.token_urlsafe(48)
        until = now + window_seconds
        previous = stored.setdefault(PREVIOUS, {})
        entries: list[dict[str, Any]] = [
            {"id": key_id(str(old).encode()), "key": old, "until": until, "retired_at": now},
            *previous_entries(stored, name),
        ]
        cut: list[str] = []
        kept: list[str] = []
        dropped: list[str] = []
        for entry in entries[1:]:
            live = bool(entry.get("key")) and float(entry.get("until", 0)) > now
            if live and str(entry.get("id")) in keep:
                kept.append(str(entry.get("id")))
            elif live and float(entry["until"]) > until:
                entry["until"] = until
                cut.append(str(entry.get("id")))
        if not SEALS_LASTING[name]:
            for entry in entries:
                if entry.get("key") and float(entry.get("until", 0)) <= now:
                    dropped.append(str(entry.get("id")))
                    del entry["key"]
        previous[name] = entries
        stored.setdefault(STABLE, {}).setdefault(name, old)
        stored[name] = new
        secrets_file.write(settings.data_dir, stored)
    return Rotation(
        name,
        key_id(str(old).encode()),
        key_id(new.encode()),
        until,
        tuple(cut),
        tuple(kept),
        tuple(dropped),
    )


def forget_retired(settings: Settings, name: Rotatable, *, current: bytes) -> tuple[str, ...]:
    """Delete the material of every previous key of `name` no longer accepted; only
    while `current` is still the ring's current key (what everything was re-sealed
    under: after a concurrent rotation, the next re-sealing forgets). Returns the ids."""
    path = settings.data_dir / SECRETS_FILE_NAME
    with secrets_file.locked(settings.data_dir):
        stored: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
        if str(stored.get(name, "")).encode() != current:
            return ()
        now = time.time()
        forgotten: list[str] = []
        for entry in previous_entries(stored, name):
            if entry.get("key") and float(entry.get("until", 0)) <= now:
                forgotten.append(str(entry.get("id")))
                del entry["key"]
        if forgotten:
            secrets_file.write(settings.data_dir, stored)
    return tuple(forgotten)


def _from_file(settings: Settings, name: Rotatable) -> bool:
    """Whether the configured key is the secrets file's (current or previous)."""
    value = getattr(settings, name)
    stored = stored_file(settings.data_dir)
    if value is None:
        return True
    text = value.get_secret_value()
    return text == stored.get(name) or key_id(text.encode()) in {
        entry.get("id") for entry in previous_entries(stored, name)
    }
