"""SSRF protection: address classification, the resolver used for every connection
(including DNS rebinding), and URL checks at save time."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence

import aiohttp
import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from autoport.webhooks.client import new_session, post
from autoport.webhooks.ssrf import (
    AddressPolicy,
    BlockedAddress,
    SafeResolver,
    UrlProblem,
    check_url,
    check_url_syntax,
    refusal,
)

from .conftest import Receiver

PUBLIC_V4 = "93.184.215.14"
PUBLIC_V6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c"


class ScriptedDns(AbstractResolver):
    """A DNS whose answer changes from one call to the next (as in a rebinding attack)."""

    def __init__(self, *answers: Sequence[str]) -> None:
        self.answers = list(answers)
        self.calls = 0

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        return [
            ResolveResult(
                hostname=host,
                host=address,
                port=port,
                family=socket.AF_INET6 if ":" in address else socket.AF_INET,
                proto=0,
                flags=0,
            )
            for address in answer
        ]

    async def close(self) -> None:
        return None


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("169.254.169.254", "link-local"),
        ("100.64.0.1", "CGNAT"),
        ("0.0.0.0", "unspecified"),  # noqa: S104
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "private"),
        ("255.255.255.255", "private"),
        ("198.18.0.1", "private"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fc00::1", "private"),
        ("fd12:3456::1", "private"),
        ("ff02::1", "multicast"),
        ("fec0::1", "site-local"),
        ("::ffff:127.0.0.1", "IPv4-mapped"),
        ("::ffff:8.8.8.8", "IPv4-mapped"),
        ("64:ff9b::a9fe:a9fe", "NAT64 embedding a link-local"),
        ("64:ff9b::7f00:1", "NAT64 embedding a loopback"),
        ("64:ff9b::a00:1", "NAT64 embedding a private"),
        ("64:ff9b:1::a00:1", "local-use NAT64"),
        ("2002:a00:1::1", "6to4 embedding a private"),
        ("2002:7f00:1::1", "6to4 embedding a loopback"),
        ("2002:5db8:d70e::1", "6to4"),
        ("::127.0.0.1", "IPv4-compatible"),
        ("2001:db8::1", "private"),
    ],
)
def test_non_public_addresses_are_refused(address: str, reason: str) -> None:
    why = refusal(ipaddress.ip_address(address))
    assert why is not None
    assert reason in why


@pytest.mark.parametrize("address", [PUBLIC_V4, "8.8.8.8", PUBLIC_V6, "64:ff9b::808:808"])
def test_public_addresses_are_accepted(address: str) -> None:
    assert refusal(ipaddress.ip_address(address)) is None


def test_loopback_is_allowed_only_by_the_setting_and_only_loopback() -> None:
    relaxed = AddressPolicy(allow_loopback=True)
    assert relaxed.refusal(ipaddress.ip_address("127.0.0.1")) is None
    assert relaxed.refusal(ipaddress.ip_address("::1")) is None
    assert relaxed.refusal(ipaddress.ip_address("10.0.0.1")) is not None
    assert relaxed.refusal(ipaddress.ip_address("::ffff:127.0.0.1")) is not None
    assert relaxed.refusal(ipaddress.ip_address("64:ff9b::7f00:1")) is not None


@pytest.mark.parametrize(
    "answer",
    [
        ["10.0.0.5"],
        ["::ffff:10.0.0.5"],
        ["64:ff9b::c0a8:101"],
        ["2002:c0a8:101::1"],
        ["169.254.169.254"],
        [PUBLIC_V4, "127.0.0.1"],  # a mixed answer is refused whole
    ],
)
async def test_resolver_refuses_answers_with_a_non_public_address(answer: list[str]) -> None:
    resolver = SafeResolver(AddressPolicy(), ScriptedDns(answer))
    with pytest.raises(BlockedAddress):
        await resolver.resolve("hooks.example.com", 443)


async def test_resolver_returns_only_the_checked_addresses() -> None:
    resolver = SafeResolver(AddressPolicy(), ScriptedDns([PUBLIC_V4, PUBLIC_V6.upper()]))
    answers = await resolver.resolve("hooks.example.com", 443)
    assert [a["host"] for a in answers] == [PUBLIC_V4, PUBLIC_V6]
    assert all(a["port"] == 443 for a in answers)


async def test_rebinding_is_caught_at_connection_time() -> None:
    # Public when the URL is saved, private when the delivery connects.
    dns = ScriptedDns([PUBLIC_V4], ["127.0.0.1"])
    policy = AddressPolicy()
    await check_url("https://rebind.example.com/hook", policy, dns)
    resolver = SafeResolver(policy, dns)
    with pytest.raises(BlockedAddress, match=r"127\.0\.0\.1"):
        await resolver.resolve("rebind.example.com", 443)
    assert dns.calls == 2


async def test_rebinding_delivery_never_reaches_the_private_address(receiver: Receiver) -> None:
    # The receiver runs on loopback; the attacker's name resolves to it on the second
    # lookup. The session's resolver refuses, so the request is never sent.
    dns = ScriptedDns([PUBLIC_V4], ["127.0.0.1"])
    policy = AddressPolicy()
    url = f"http://rebind.example.com:{receiver.port}/hook"
    await check_url(url.replace("http://", "https://"), policy, dns)
    session = new_session(policy, resolver=dns)
    try:
        result = await post(
            session,
            url=url,
            body=b"{}",
            headers={},
            policy=policy,
            timeout_seconds=2,
            body_limit=100,
        )
    finally:
        await session.close()
    assert not result.ok
    assert result.error is not None and "refused" in result.error
    assert receiver.requests == []


async def test_ip_literal_urls_are_checked_before_each_request(receiver: Receiver) -> None:
    policy = AddressPolicy()
    async with aiohttp.ClientSession() as session:
        result = await post(
            session,
            url=receiver.url,
            body=b"{}",
            headers={},
            policy=policy,
            timeout_seconds=2,
            body_limit=100,
        )
    assert not result.ok
    assert result.error is not None and "loopback" in result.error
    assert receiver.requests == []


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://hooks.example.com/x", "https://"),
        ("http://hooks.example.com/x", "https://"),
        ("https:///nohost", "host"),
        ("https://user:pw@hooks.example.com/x", "credentials"),
        ("https://hooks.example.com/x#frag", "fragment"),
        ("https://10.0.0.1/x", "private"),
        ("https://[::1]/x", "loopback"),
        ("https://169.254.169.254/latest/meta-data", "link-local"),
        ("https://hooks.example.com:99999/x", "valid URL"),
        ("https://hooks.example.com/" + "a" * 3000, "2048"),
        ("https://a..b/hook", "host name"),
        ("https://" + "a" * 64 + ".example.com/", "host name"),
        ("not a url", "https://"),
    ],
)
def test_bad_urls_are_refused_at_save_time(url: str, message: str) -> None:
    with pytest.raises(UrlProblem, match=message):
        check_url_syntax(url, AddressPolicy())


def test_http_is_allowed_for_loopback_only_with_the_setting() -> None:
    relaxed = AddressPolicy(allow_loopback=True)
    check_url_syntax("http://127.0.0.1:9000/hook", relaxed)
    check_url_syntax("http://localhost:9000/hook", relaxed)
    with pytest.raises(UrlProblem):
        check_url_syntax("http://127.0.0.1:9000/hook", AddressPolicy())
    with pytest.raises(UrlProblem):
        check_url_syntax("http://hooks.example.com/hook", relaxed)


async def test_a_name_resolving_to_a_private_address_is_refused_at_save_time() -> None:
    with pytest.raises(UrlProblem, match="private"):
        await check_url("https://intranet.example.com/", AddressPolicy(), ScriptedDns(["10.9.8.7"]))


async def test_localhost_is_refused_without_the_setting() -> None:
    # The system resolver: localhost is loopback on every machine.
    with pytest.raises(UrlProblem, match="loopback"):
        await check_url("https://localhost/hook", AddressPolicy())


@pytest.mark.parametrize(
    "url",
    ["https://hooks.example.com./x", "https://bücher.example/x", "https://xn--bcher-kva.example/x"],
)
def test_valid_host_names_pass_the_syntax_check(url: str) -> None:
    check_url_syntax(url, AddressPolicy())


@pytest.mark.parametrize("host", ["a..b", ".example.com", "a" * 64 + ".example.com"])
async def test_an_unencodable_host_name_is_a_resolution_error_not_a_crash(host: str) -> None:
    # The system resolver IDNA-encodes the name; its UnicodeError must surface as an
    # OSError (aiohttp's DNS error), at save time and when a stored URL is delivered to.
    resolver = SafeResolver(AddressPolicy())
    try:
        with pytest.raises(OSError, match="not a valid host name"):
            await resolver.resolve(host, 443)
    finally:
        await resolver.close()
    with pytest.raises(UrlProblem, match="host name"):
        await check_url(f"https://{host}/hook", AddressPolicy())


async def test_delivering_to_an_unencodable_host_name_is_a_failed_attempt() -> None:
    policy = AddressPolicy()
    session = new_session(policy)
    try:
        result = await post(
            session,
            url="https://a..b/hook",
            body=b"{}",
            headers={},
            policy=policy,
            timeout_seconds=2,
            body_limit=100,
        )
    finally:
        await session.close()
    assert not result.ok
    assert result.error is not None and "not a valid host name" in result.error
