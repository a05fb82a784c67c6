from sqlalchemy import BigInteger, Boolean, Column, Float, Index, Table, Text, false

from autoport.db import metadata

# A simulated vehicle of the sandbox environment (brand `sandbox`). The simulator's
# physical state lives in `state` (JSON); `step` counts the fixed simulation steps since
# `started_at` (wall clock, µs), so step n is due at started_at + n * step_seconds /
# time_scale and a scenario replays identically from (`scenario`, `seed`).
# The emulator's settings: `overrides` ({"cap.prop": data} pinned by hand), `failures`
# ({"cap.prop": reason}), `offline`, `latency_seconds`, `eligible`, `connectivity_status`,
# `privacy_mode` (migration 0010: the owner switched data sharing off; nothing is sent).
sandbox_vehicles = Table(
    "sandbox_vehicles",
    metadata,
    Column("environment", Text, primary_key=True),
    Column("vin", Text, primary_key=True),
    Column("name", Text, nullable=True),
    Column("powertrain", Text, nullable=False),
    Column("profile", Text, nullable=False),
    # The equipped properties, ["capability.property"], decided by the profile.
    Column("properties", Text, nullable=False),
    Column("scenario", Text, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("time_scale", Float, nullable=False),
    Column("step_seconds", Float, nullable=False),
    Column("running", Boolean, nullable=False),
    Column("started_at", BigInteger, nullable=False),
    Column("step", BigInteger, nullable=False),
    Column("state", Text, nullable=False),
    Column("overrides", Text, nullable=False),
    Column("failures", Text, nullable=False),
    Column("offline", Boolean, nullable=False),
    Column("latency_seconds", Float, nullable=False),
    Column("eligible", Boolean, nullable=False),
    Column("connectivity_status", Text, nullable=False),
    Column("privacy_mode", Boolean, nullable=False, server_default=false()),
    # The account whose developer created it in the console (migration 0018): only that
    # account's console users see it. None: made by the operator (admin API, CLI, demo).
    Column("account_id", Text, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Index("ix_sandbox_vehicles_running", "running", "environment"),
    Index("ix_sandbox_vehicles_account", "environment", "account_id"),
)
