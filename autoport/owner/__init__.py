"""The owner portal (`/owner`): owners prove ownership, see and withdraw access to their
vehicle, and download its data. See docs/owner-portal.md."""
