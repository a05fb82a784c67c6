"""Schema: every table on one MetaData (`autoport.db.tables`), evolved by Alembic."""

from sqlalchemy import MetaData

# Stable constraint names, so Alembic migrations can refer to them on both backends.
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)
