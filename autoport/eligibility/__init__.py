"""Eligibility lookups: can a vehicle of a brand deliver data (`POST /v1/eligibility`)."""
