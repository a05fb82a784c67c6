"""Shared plumbing used by every feature: database, errors, environments, crypto, time."""
