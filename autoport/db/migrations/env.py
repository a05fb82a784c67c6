"""Alembic environment: the connection is handed over by autoport.kit.migrate."""

from alembic import context

from autoport.db.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations with `autoport migrate`, not the alembic command")

context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite cannot ALTER most things in place: batch mode rebuilds tables instead.
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
