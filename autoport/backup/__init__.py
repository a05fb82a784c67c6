"""Backups and restores of the database and the secrets (`autoport backup`/`restore`)."""
