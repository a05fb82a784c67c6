"""What Mosquitto needs from autoport: the broker configuration, a password file in
Mosquitto's own `$7$` format (PBKDF2-SHA512, as `mosquitto_passwd` writes it) and an ACL
file that lets each application read only its own topic.

Credentials: every application gets a username (its application id) and a random
password, shown once by `autoport streaming credentials`; autoport keeps only the `$7$`
hash. autoport's publisher is `autoport-publisher`, with the password from `mqtt_url`
or, by default, one derived from `token_hmac_key` (so nothing more needs storing).

TLS: the configuration may add a second listener with a certificate and key (same
password file and ACL) for remote subscribers; the publisher connects over TLS when
`mqtt_url` is mqtts://, trusting `mqtt_ca_file` or the system's trust store.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import os
import secrets
import signal
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from autoport.config import MQTT_PORT, MQTTS_PORT, Settings
from autoport.kit.environments import Environment

PUBLISHER_USERNAME = "autoport-publisher"
PID_FILE = "mosquitto.pid"
DEFAULT_PORT = MQTT_PORT
DEFAULT_TLS_PORT = MQTTS_PORT
# The oldest TLS version the broker's TLS listener accepts (Mosquitto: a minimum).
TLS_MIN_VERSION = "tlsv1.2"
# Mosquitto's own default; the passwords are 192-bit random strings, so the iteration
# count adds nothing against guessing and only slows the broker's CONNECT handling.
PBKDF2_ITERATIONS = 101
SALT_BYTES = 12


def topic_of(environment: Environment, application_id: str) -> str:
    return f"{environment.topic_name}/level13/{application_id}"


def password_hash(password: str, *, salt: bytes | None = None) -> str:
    """`$7$<iterations>$<salt>$<hash>` (base64), what Mosquitto 2 reads."""
    salt = salt if salt is not None else secrets.token_bytes(SALT_BYTES)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, PBKDF2_ITERATIONS)
    return (
        f"$7${PBKDF2_ITERATIONS}${base64.b64encode(salt).decode()}"
        f"${base64.b64encode(digest).decode()}"
    )


def new_password() -> str:
    return secrets.token_urlsafe(24)


@dataclass(frozen=True, slots=True)
class BrokerAddress:
    host: str
    port: int
    username: str
    password: str
    tls: bool = False
    # The CA(s) trusted for the broker's certificate (tls only); None: the system's.
    ca_file: Path | None = None

    def tls_context(self) -> ssl.SSLContext | None:
        """For mqtts://: certificate and host name checked, TLS 1.2 at least."""
        if not self.tls:
            return None
        context = ssl.create_default_context(
            cafile=str(self.ca_file) if self.ca_file is not None else None
        )
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        return context


def broker_address(settings: Settings) -> BrokerAddress | None:
    """Where and as whom autoport publishes; None when MQTT is off."""
    if not settings.mqtt_url:
        return None
    parts = urlsplit(settings.mqtt_url)
    username = unquote(parts.username) if parts.username else PUBLISHER_USERNAME
    password = unquote(parts.password) if parts.password else derived_publisher_password(settings)
    host = parts.hostname or "127.0.0.1"
    port = settings.mqtt_port
    assert port is not None  # mqtt_url is set
    return BrokerAddress(host, port, username, password, settings.mqtt_tls, settings.mqtt_ca_file)


def announced_tls_port(settings: Settings) -> int | None:
    """The TLS port applications are told (`credentials`): the TLS listener's from the
    settings, else the port of an mqtts:// `mqtt_url`; None when there is no TLS."""
    if settings.mqtt_tls_cert is not None:
        return settings.mqtt_tls_port
    return settings.mqtt_port if settings.mqtt_tls else None


@dataclass(frozen=True, slots=True)
class TlsListener:
    """The broker's TLS listener: PEM certificate (chain) and key, port, address (None:
    every interface)."""

    certfile: Path
    keyfile: Path
    port: int = DEFAULT_TLS_PORT
    bind: str | None = None


class TlsFileError(ValueError):
    """A certificate or key file Mosquitto could not use; `option` names the setting."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


def check_tls_files(certfile: Path, keyfile: Path) -> None:
    """Refuse files Mosquitto would fail on at start: missing, unreadable, not PEM, an
    encrypted key (Mosquitto would ask for its passphrase) or a key of another
    certificate. Raises TlsFileError naming `cert` or `key`."""
    for option, path in (("cert", certfile), ("key", keyfile)):
        if not path.exists():
            raise TlsFileError(option, f"no such file: {path}")
        if not path.is_file():
            raise TlsFileError(option, f"not a file: {path}")
        try:
            with path.open("rb") as handle:
                handle.read(1)
        except OSError as error:
            raise TlsFileError(option, f"cannot read {path}: {error.strerror}") from None
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=certfile)
    except ssl.SSLError as error:
        raise TlsFileError("cert", f"not a PEM certificate: {certfile} ({error})") from None

    def encrypted() -> str:
        raise TlsFileError(
            "key", f"{keyfile} is encrypted; Mosquitto needs an unencrypted key file"
        )

    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(certfile, keyfile, encrypted)
    except ssl.SSLError as error:
        raise TlsFileError(
            "key", f"{keyfile} is not the PEM private key of {certfile} ({error})"
        ) from None


def derived_publisher_password(settings: Settings) -> str:
    key = settings.token_hmac_key
    if key is None:
        raise RuntimeError("secrets were not loaded (config.ensure_secrets)")
    from autoport.kit.keyring import current_keyring

    # The ring's first key: the broker's password file stays valid across key rotations.
    stable = current_keyring(settings, "token_hmac_key").stable or key.get_secret_value().encode()
    mac = hmac.new(stable, b"autoport mqtt publisher", hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()).decode().rstrip("=")


class ListenerConflict(ValueError):
    """The TLS listener's port is the plain listener's."""


@dataclass(frozen=True, slots=True)
class MosquittoFiles:
    config: str
    passwd: str
    acl: str


def render(
    settings: Settings,
    *,
    directory: Path,
    applications: Iterable[tuple[Environment, str, str]],
    port: int | None = None,
    bind: str = "127.0.0.1",
    run_as: str | None = None,
    tls: TlsListener | None = None,
) -> MosquittoFiles:
    """The three files, for a broker whose files live in `directory`. `applications`
    are (environment, application id, `$7$` hash) rows. `tls` adds a TLS listener with
    the same password file and ACL (the plain listener stays, for the local publisher)."""
    address = broker_address(settings)
    publisher_user = address.username if address else PUBLISHER_USERNAME
    publisher_password = address.password if address else derived_publisher_password(settings)
    if port is not None:
        listen_port = port
    elif address is not None and not address.tls:
        listen_port = address.port
    else:
        # An mqtts:// publisher's port is the TLS listener's, not the plain one's.
        listen_port = DEFAULT_PORT
    directory = directory.resolve()
    config_lines = [
        "# Mosquitto for autoport streaming; generated by `autoport streaming mosquitto-config`.",
        "# autoport reloads it after credential changes: SIGHUP to the pid in pid_file.",
        "per_listener_settings false",
        "allow_anonymous false",
        f"listener {listen_port} {bind}",
        # A client's id is its username: no application can connect with another's id
        # (which would disconnect it and, with a persistent session, drop its queue).
        "use_username_as_clientid true",
        f"password_file {directory / 'passwd'}",
        f"acl_file {directory / 'acl'}",
        # QoS 1 messages queued for persistent sessions survive a broker restart.
        "persistence true",
        f"persistence_location {directory / 'data'}/",
        # How autoport finds this broker to reload it (`reload`): by its own pid file,
        # never by process name.
        f"pid_file {directory / PID_FILE}",
        "autosave_interval 60",
        # A subscriber that was away catches up from its persistent session.
        "max_queued_messages 100000",
        "max_inflight_messages 100",
        "set_tcp_nodelay true",
        "log_dest stderr",
        "log_type error",
        "log_type warning",
        "log_type notice",
    ]
    if run_as:
        config_lines.append(f"user {run_as}")
    if tls is not None:
        if tls.port == listen_port:
            raise ListenerConflict(f"the TLS and the plain listener both use port {listen_port}")
        config_lines += [
            "",
            "# TLS listener for remote clients: the same users, passwords and ACL.",
            f"listener {tls.port}" + (f" {tls.bind}" if tls.bind else ""),
            f"certfile {tls.certfile.resolve()}",
            f"keyfile {tls.keyfile.resolve()}",
            f"tls_version {TLS_MIN_VERSION}",
            "use_username_as_clientid true",
        ]
    passwd_lines = [f"{publisher_user}:{password_hash(publisher_password)}"]
    acl_lines = [
        "# autoport's publisher writes every application topic.",
        f"user {publisher_user}",
        *(f"topic write {env.topic_name}/level13/#" for env in Environment),
        "",
    ]
    for environment, application_id, hashed in applications:
        passwd_lines.append(f"{application_id}:{hashed}")
        topic = topic_of(environment, application_id)
        acl_lines += [f"user {application_id}", f"topic read {topic}", ""]
    return MosquittoFiles(
        config="\n".join(config_lines) + "\n",
        passwd="\n".join(passwd_lines) + "\n",
        acl="\n".join(acl_lines) + "\n",
    )


def write(
    files: MosquittoFiles, directory: Path, *, only: frozenset[str] | None = None
) -> list[Path]:
    """Write the files (the password file readable by its owner only); `only` names
    the ones to write (e.g. the credential files, leaving an edited mosquitto.conf)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "data").mkdir(exist_ok=True)
    written = []
    for name, text, mode in (
        ("mosquitto.conf", files.config, 0o644),
        ("passwd", files.passwd, 0o600),
        ("acl", files.acl, 0o644),
    ):
        if only is not None and name not in only:
            continue
        path = directory / name
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        if path.exists():
            # A rewrite keeps the owner (the broker's user must still read it).
            previous = path.stat()
            with contextlib.suppress(PermissionError):
                os.chown(tmp, previous.st_uid, previous.st_gid)
        os.replace(tmp, path)
        written.append(path)
    return written


def hand_over(directory: Path, user: str) -> None:
    """Give the files and the persistence directory to the user Mosquitto runs as
    (it reads the password file after dropping root privileges)."""
    import pwd

    entry = pwd.getpwnam(user)
    for path in (
        directory,
        directory / "data",
        *(directory / n for n in ("mosquitto.conf", "passwd", "acl")),
    ):
        if path.exists():
            os.chown(path, entry.pw_uid, entry.pw_gid)


def installed_applications(directory: Path, *, publisher: str) -> set[tuple[str, str]] | None:
    """(username, hash) of the applications in the password file of `directory` (the
    publisher's line left out); None when there is no password file to keep."""
    try:
        text = (directory / "passwd").read_text()
    except FileNotFoundError:
        return None
    found = set()
    for line in text.splitlines():
        user, sep, hashed = line.partition(":")
        if sep and user != publisher:
            found.add((user, hashed))
    return found


def reload(directory: Path) -> bool:
    """SIGHUP to the broker whose configuration lives in `directory` (it re-reads the
    password file and ACL, and disconnects clients that no longer pass them). Found by
    the pid file its configuration names, and only if that pid is a Mosquitto (a stale
    file's pid may belong to another process by now). False when there is none, or when
    this process may not signal it (a broker running as another user)."""
    try:
        pid = int((directory / PID_FILE).read_text().strip())
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return False
    if b"mosquitto" not in command.split(b"\0", 1)[0]:
        return False
    try:
        os.kill(pid, signal.SIGHUP)
    except (ProcessLookupError, PermissionError):
        return False
    return True
