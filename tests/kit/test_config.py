"""Configuration from environment and file; secrets generated once, persisted, never shown."""

from __future__ import annotations

import json
import multiprocessing
import stat
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from autoport.config import Settings, ensure_secrets, rotate_admin_token
from autoport.kit.crypto import sha256_hex


def test_defaults_use_sqlite_in_the_data_dir(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert settings.resolved_database_url == f"sqlite:///{tmp_path.resolve()}/autoport.db"
    assert settings.is_sqlite


def test_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOPORT_BASE_URL", "https://api.example.test/")
    monkeypatch.setenv("AUTOPORT_PORT", "9090")
    monkeypatch.setenv("AUTOPORT_DATABASE_URL", "postgresql://u:pw@db:5432/autoport")
    settings = Settings()
    assert settings.base_url == "https://api.example.test"
    assert settings.port == 9090
    assert not settings.is_sqlite
    assert "pw" not in json.dumps(settings.safe_summary())


def test_toml_file_with_env_taking_precedence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "autoport.toml"
    config.write_text('base_url = "https://file.example.test"\nport = 7000\nlog_level = "debug"\n')
    monkeypatch.setenv("AUTOPORT_CONFIG_FILE", str(config))
    monkeypatch.setenv("AUTOPORT_PORT", "7001")
    settings = Settings()
    assert settings.base_url == "https://file.example.test"
    assert settings.log_level == "debug"
    assert settings.port == 7001


def test_missing_config_file_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOPORT_CONFIG_FILE", "/nonexistent/autoport.toml")
    with pytest.raises(ValueError, match="no such file"):
        Settings()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("base_url", "api.example.test", "absolute http"),
        ("database_url", "mysql://x", "sqlite:///"),
        ("port", 70000, "65535"),
        ("log_level", "loud", "log_level"),
    ],
)
def test_bad_values_are_refused_with_the_field(field: str, value: object, message: str) -> None:
    with pytest.raises(ValidationError) as error:
        Settings(**{field: value})  # type: ignore[arg-type]
    assert field in str(error.value)
    assert message in str(error.value)


def test_unknown_setting_is_refused() -> None:
    with pytest.raises(ValidationError, match="base_ulr"):
        Settings(base_ulr="x")  # type: ignore[call-arg]


def test_secrets_are_generated_once_and_persisted(tmp_path: Path) -> None:
    first, generated = ensure_secrets(Settings(data_dir=tmp_path))
    assert generated.admin_token and generated.admin_token.startswith("ap_admin_")
    secrets_file = tmp_path / "secrets.json"
    assert stat.S_IMODE(secrets_file.stat().st_mode) == 0o600
    stored = json.loads(secrets_file.read_text())
    # The admin token itself is never stored, only its hash.
    assert generated.admin_token not in secrets_file.read_text()
    assert stored["admin_token_sha256"] == sha256_hex(generated.admin_token)

    second, again = ensure_secrets(Settings(data_dir=tmp_path))
    assert again.admin_token is None
    assert first.token_hmac_key and second.token_hmac_key
    assert first.token_hmac_key.get_secret_value() == second.token_hmac_key.get_secret_value()
    assert first.session_secret == second.session_secret
    assert len(first.token_hmac_key.get_secret_value()) >= 48


def test_given_secrets_win_and_are_not_written(tmp_path: Path) -> None:
    settings, generated = ensure_secrets(
        Settings(
            data_dir=tmp_path,
            token_hmac_key="k" * 40,
            session_secret="s" * 40,
            admin_token="given-admin-token",
        )
    )
    assert generated.admin_token is None
    assert settings.admin_token_sha256 == sha256_hex("given-admin-token")
    assert not (tmp_path / "secrets.json").exists()


def test_secrets_never_appear_in_repr_or_summary(tmp_path: Path) -> None:
    settings, _ = ensure_secrets(Settings(data_dir=tmp_path))
    assert settings.token_hmac_key is not None
    secret = settings.token_hmac_key.get_secret_value()
    assert secret not in repr(settings)
    assert secret not in str(settings.model_dump())
    assert secret not in json.dumps(settings.safe_summary())


def test_rotate_admin_token(tmp_path: Path) -> None:
    _, generated = ensure_secrets(Settings(data_dir=tmp_path))
    new = rotate_admin_token(Settings(data_dir=tmp_path))
    settings, _ = ensure_secrets(Settings(data_dir=tmp_path))
    assert new != generated.admin_token
    assert settings.admin_token_sha256 == sha256_hex(new)


def test_public_addresses_follow_the_listen_port() -> None:
    settings = Settings(port=9000)
    assert settings.base_url == "http://127.0.0.1:9000"
    assert settings.sandbox_base_url == "http://127.0.0.1:9000/sandbox"
    wildcard = Settings(host="0.0.0.0", port=9001)  # noqa: S104
    assert wildcard.base_url == "http://127.0.0.1:9001"


def test_explicit_public_addresses_are_kept() -> None:
    settings = Settings(port=9000, base_url="https://api.example.test")
    assert settings.base_url == "https://api.example.test"
    assert settings.sandbox_base_url == "https://api.example.test/sandbox"


def _key_of_a_starting_process(data_dir: str, barrier: Any, keys: Any) -> None:
    barrier.wait()  # every process reads and writes at the same moment
    settings, _ = ensure_secrets(Settings(data_dir=Path(data_dir)))
    assert settings.token_hmac_key is not None
    keys.put(settings.token_hmac_key.get_secret_value())


def test_processes_starting_together_agree_on_one_set_of_secrets(tmp_path: Path) -> None:
    # Worker processes on a fresh data directory: without the lock each could keep a
    # key of its own, and tokens issued by one would fail in another.
    context = multiprocessing.get_context("fork")
    barrier, keys = context.Barrier(6), context.Queue()
    processes = [
        context.Process(target=_key_of_a_starting_process, args=(str(tmp_path), barrier, keys))
        for _ in range(6)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=30)
        assert process.exitcode == 0
    seen = {keys.get(timeout=5) for _ in processes}
    stored = json.loads((tmp_path / "secrets.json").read_text())
    assert seen == {stored["token_hmac_key"]}
