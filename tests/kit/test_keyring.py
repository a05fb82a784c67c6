"""The keyring: the previous key is accepted within its window and not after; a key
from the environment that the secrets file does not know stays a keyring of one."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from autoport.config import Settings, ensure_secrets
from autoport.kit import keyring


def test_previous_key_is_accepted_for_its_window_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, _ = ensure_secrets(Settings(data_dir=tmp_path))
    assert settings.token_hmac_key is not None
    old = settings.token_hmac_key.get_secret_value().encode()
    rotation = keyring.rotate(Settings(data_dir=tmp_path), "token_hmac_key", window_seconds=60)
    assert rotation.old_id == keyring.key_id(old)
    # A process started before the rotation (its settings hold the old key) follows it.
    ring = keyring.current_keyring(settings, "token_hmac_key")
    assert ring.current != old and ring.previous == (old,)
    assert keyring.accepted(ring.current) == (ring.current, old)
    assert ring.by_id(rotation.old_id) == old
    assert ring.stable == old  # ids derived from the first key do not change
    # After the window: refused.
    later = time.time() + 61
    monkeypatch.setattr(time, "time", lambda: later)
    assert keyring.accepted(ring.current) == (ring.current,)
    assert keyring.current_keyring(settings, "token_hmac_key").previous == ()
    # The next rotation drops the expired key material and keeps its id.
    keyring.rotate(Settings(data_dir=tmp_path), "token_hmac_key", window_seconds=60)
    stored = json.loads((tmp_path / "secrets.json").read_text())
    entries = stored["previous_keys"]["token_hmac_key"]
    assert [e["id"] for e in entries][1] == rotation.old_id
    assert "key" not in entries[1]
    assert old.decode() not in (tmp_path / "secrets.json").read_text().replace(
        stored["stable_keys"]["token_hmac_key"], ""
    )


def test_a_key_from_the_environment_is_not_replaced_by_the_file(tmp_path: Path) -> None:
    ensure_secrets(Settings(data_dir=tmp_path))
    keyring.rotate(Settings(data_dir=tmp_path), "session_secret", window_seconds=60)
    given = Settings(data_dir=tmp_path, session_secret=SecretStr("s" * 48))
    ring = keyring.current_keyring(given, "session_secret")
    assert ring.current == b"s" * 48 and ring.previous == ()
    with pytest.raises(ValueError, match="AUTOPORT_SESSION_SECRET"):
        keyring.rotate(given, "session_secret", window_seconds=60)
