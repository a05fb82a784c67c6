"""Accounts, applications and their credentials (client secrets, assertion keys)."""
