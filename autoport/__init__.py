"""autoport: a self-hostable connected-car data platform."""

__version__ = "0.1.0"
