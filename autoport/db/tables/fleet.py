from sqlalchemy import BigInteger, Column, ForeignKey, Index, Table, Text

from autoport.db import metadata

# A vehicle an application (its fleet) asked to be cleared for. `status` is one of
# pending, approved, rejected, error, revoking, revoked, canceling, canceled (the state
# machine lives in autoport.fleet). An approved vehicle is readable by the application's
# client_credentials token, with the application's registered properties.
fleet_vehicles = Table(
    "fleet_vehicles",
    metadata,
    Column("environment", Text, primary_key=True),
    Column("application_id", Text, ForeignKey("applications.id"), primary_key=True),
    Column("vin", Text, primary_key=True),
    Column("brand", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("tags", Text, nullable=False),
    # [{timestamp, status, reason?}] in order, one entry per transition.
    Column("changelog", Text, nullable=False),
    Column("reason", Text, nullable=True),
    Column("inserted_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("approved_at", BigInteger, nullable=True),
    # When the background worker should next look at this vehicle (None: nothing to do).
    Column("next_check_at", BigInteger, nullable=True),
    Index("ix_fleet_vehicles_vin", "environment", "vin", "status"),
    Index("ix_fleet_vehicles_due", "next_check_at"),
)
