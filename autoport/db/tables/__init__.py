"""All tables, one module per feature, on the shared MetaData.

Columns follow autoport.kit.db's conventions: instants are BIGINT microseconds since the
epoch (UTC), JSON is TEXT, and every feature row carries its `environment`.
"""

from autoport.db import metadata
from autoport.db.tables import (
    apps,
    commands,
    consent,
    fleet,
    oauth,
    outbox,
    sandbox,
    streaming,
    vehicle_data,
    webhooks,
)

__all__ = [
    "apps",
    "commands",
    "consent",
    "fleet",
    "metadata",
    "oauth",
    "outbox",
    "sandbox",
    "streaming",
    "vehicle_data",
    "webhooks",
]
