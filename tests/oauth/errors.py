"""What the OAuth tests check of an error answer (RFC 6749 §5.2)."""

from __future__ import annotations

import httpx


def assert_oauth_error(response: httpx.Response, status: int, error: str, words: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == error
    assert words in body["error_description"], body["error_description"]
