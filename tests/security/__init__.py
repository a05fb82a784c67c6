"""Attack tests: each reproduces a way around an access rule (docs/security.md)."""
