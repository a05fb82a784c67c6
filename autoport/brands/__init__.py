"""Carmaker connectors: one interface hiding each carmaker's differences, and the
registry that says which connector serves which brand (see docs/connectors.md)."""
