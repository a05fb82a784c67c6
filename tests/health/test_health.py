"""Operations endpoints as load balancers probe them: HEAD as well as GET."""

from __future__ import annotations

import httpx
import pytest


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics", "/sandbox/healthz"])
async def test_head_answers_like_get(embedded_client: httpx.AsyncClient, path: str) -> None:
    head = await embedded_client.head(path)
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == (await embedded_client.get(path)).headers["content-type"]
    assert head.headers["x-request-id"]


async def test_only_get_and_head_are_served(embedded_client: httpx.AsyncClient) -> None:
    response = await embedded_client.post("/healthz")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"
