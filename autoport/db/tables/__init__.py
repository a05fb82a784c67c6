"""All tables, one module per feature, on the shared MetaData.

Columns follow autoport.kit.db's conventions: instants are BIGINT microseconds since the
epoch (UTC), JSON is TEXT, and every feature row carries its `environment`.
"""

from autoport.db import metadata
from autoport.db.tables import (
    apps,
    commands,
    consent,
    console,
    fleet,
    history,
    oauth,
    outbox,
    owner,
    sandbox,
    streaming,
    usage,
    vehicle_data,
    webhooks,
)

__all__ = [
    "apps",
    "commands",
    "consent",
    "console",
    "fleet",
    "history",
    "metadata",
    "oauth",
    "outbox",
    "owner",
    "sandbox",
    "streaming",
    "usage",
    "vehicle_data",
    "webhooks",
]
