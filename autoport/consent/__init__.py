"""The owner's consent flow: pages, ownership verification, pending approvals."""
