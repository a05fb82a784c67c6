"""The ownership proof's part of the pages: the consent pages and the owner portal draw
their verify steps with `templates/proof_steps.html` (each surface's catalogue carries
its words)."""

from __future__ import annotations

from pathlib import Path

PROOF_TEMPLATES = Path(__file__).parent / "templates"
