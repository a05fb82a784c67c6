"""Vehicle commands (migration 0019).

A command moves pending -> sent -> executed | failed | timed_out. `inflight` is
"<vin>/<capability>" while the command is pending or sent and NULL once it is finished:
the unique constraint on (environment, inflight) lets at most one command per vehicle
and capability be in flight, race-free on both backends (NULLs never collide).
`idempotency_key` is unique per application and vehicle (migration 0021): the same key
finds the same command of that vehicle.
"""

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Table, Text, UniqueConstraint

from autoport.db import metadata

vehicle_commands = Table(
    "vehicle_commands",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("application_id", Text, ForeignKey("applications.id"), nullable=False),
    # The owner's authorization the command was sent under (None: fleet clearance).
    Column("authorization_id", Text, nullable=True),
    Column("vin", Text, nullable=False),
    Column("brand", Text, nullable=False),
    Column("capability", Text, nullable=False),
    Column("command", Text, nullable=False),
    Column("arguments", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("failure_reason", Text, nullable=True),
    Column("failure_description", Text, nullable=True),
    Column("idempotency_key", Text, nullable=True),
    # SHA-256 of the request body: the same key with another body is refused.
    Column("request_hash", Text, nullable=False),
    Column("inflight", Text, nullable=True),
    # The worker that sent it (a command in `sent` is never sent again, by anyone).
    Column("claimed_by", Text, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("sent_at", BigInteger, nullable=True),
    Column("finished_at", BigInteger, nullable=True),
    # Past this instant an unfinished command is timed_out (never re-sent).
    Column("deadline_at", BigInteger, nullable=False),
    UniqueConstraint(
        "environment",
        "application_id",
        "vin",
        "idempotency_key",
        name="uq_vehicle_commands_idempotency",
    ),
    UniqueConstraint("environment", "inflight", name="uq_vehicle_commands_inflight"),
    Index("ix_vehicle_commands_status", "status", "created_at"),
    Index("ix_vehicle_commands_vin", "environment", "vin", "created_at"),
)
