"""Benchmarks that print figures; each runs a floor or baseline beside its subject."""
