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
    # Expired key material is dropped once webhook secrets were re-sealed under the
    # current key (autoport.keys.service, after each rotation), and its id is kept.
    keyring.rotate(Settings(data_dir=tmp_path), "token_hmac_key", window_seconds=60)
    current = keyring.current_keyring(settings, "token_hmac_key").current
    assert keyring.forget_retired(settings, "token_hmac_key", current=current) == (rotation.old_id,)
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


@pytest.mark.parametrize("name", keyring.ROTATABLE)
def test_a_leak_rotation_cuts_every_previous_key(tmp_path: Path, name: keyring.Rotatable) -> None:
    """An ordinary rotation, then one with no window (after a leak): neither earlier key
    is accepted any more. token_hmac_key's material is kept (refused) to open the
    webhook secrets sealed under it until they are re-sealed; session_secret's, which
    seals nothing lasting, is deleted at once."""
    settings, _ = ensure_secrets(Settings(data_dir=tmp_path))
    first = keyring.current_keyring(settings, name).current
    ordinary = keyring.rotate(Settings(data_dir=tmp_path), name, window_seconds=3600)
    second = keyring.current_keyring(settings, name).current
    assert keyring.current_keyring(settings, name).previous == (first,)
    leak = keyring.rotate(Settings(data_dir=tmp_path), name, window_seconds=0)
    assert leak.old_id == keyring.key_id(second)
    assert leak.cut == (ordinary.old_id,)
    ring = keyring.current_keyring(settings, name)
    assert ring.previous == ()
    assert keyring.accepted(ring.current) == (ring.current,)
    assert ring.by_id(ordinary.old_id) is None and ring.by_id(leak.old_id) is None
    if keyring.SEALS_LASTING[name]:
        assert ring.retained == (second, first)
        assert ring.openers == (ring.current, second, first)
        # Only once everything was re-sealed under the current key (autoport.keys).
        assert keyring.forget_retired(settings, name, current=second) == ()
        forgotten = keyring.forget_retired(settings, name, current=ring.current)
        assert set(forgotten) == {ordinary.old_id, leak.old_id}
        assert keyring.current_keyring(settings, name).retained == ()
    else:
        assert set(leak.dropped) == {ordinary.old_id, leak.old_id}
        assert ring.retained == ()
    stored = json.loads((tmp_path / "secrets.json").read_text())
    assert all("key" not in entry for entry in stored["previous_keys"][name])
    assert second.decode() not in (tmp_path / "secrets.json").read_text()


def test_a_rotation_keeps_the_previous_keys_it_is_told_to(tmp_path: Path) -> None:
    settings, _ = ensure_secrets(Settings(data_dir=tmp_path))
    first = keyring.current_keyring(settings, "token_hmac_key").current
    ordinary = keyring.rotate(Settings(data_dir=tmp_path), "token_hmac_key", window_seconds=3600)
    second = keyring.current_keyring(settings, "token_hmac_key").current
    assert keyring.accepted_previous_ids(settings, "token_hmac_key") == [ordinary.old_id]
    leak = keyring.rotate(
        Settings(data_dir=tmp_path),
        "token_hmac_key",
        window_seconds=0,
        keep=frozenset({ordinary.old_id}),
    )
    assert leak.kept == (ordinary.old_id,) and leak.cut == ()
    ring = keyring.current_keyring(settings, "token_hmac_key")
    assert ring.previous == (first,) and ring.retained == (second,)
    # A shorter window than a kept key's is not imposed on it; others are capped.
    third = keyring.rotate(Settings(data_dir=tmp_path), "token_hmac_key", window_seconds=60)
    assert third.cut == (ordinary.old_id,)
    entries = json.loads((tmp_path / "secrets.json").read_text())["previous_keys"]
    assert max(float(e["until"]) for e in entries["token_hmac_key"]) <= time.time() + 60
