"""Proof Key for Code Exchange (RFC 7636): the one place its rules are checked, when the
consent flow accepts a challenge (autoport.consent.service), when a code is issued for it
(autoport.oauth.service) and when the code is exchanged
(autoport.oauth.grants.authorization_code).

Only S256 (RFC 9700 §2.1.1: `plain` protects nothing once the authorization request is
seen, which is what PKCE is for): a request naming `plain` is refused, and a code stored
with `plain` by an older autoport is not redeemed. PKCE is required of public clients
always, and of confidential clients too unless the operator turned
`oauth_pkce_required_for_confidential_clients` off for clients that cannot send it
(RFC 9700 §2.1.1 recommends it for both; it stops code injection)."""

from __future__ import annotations

import base64
import hashlib
import re

from autoport.kit.crypto import same

METHODS = ("S256",)
# A challenge without a method is S256 here (RFC 7636 §4.3 says plain; a client that
# means plain is refused at the verifier, which never matches its own hash).
DEFAULT_METHOD = "S256"
# RFC 7636 §4.1 (code_verifier = 43*128unreserved); a challenge has the same alphabet
# (§4.2: BASE64URL of SHA-256 is 43 characters).
_CHALLENGE = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")


def s256(verifier: str) -> str:
    """RFC 7636 §4.2: BASE64URL-ENCODE(SHA256(ASCII(code_verifier))), unpadded."""
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def required(*, public: bool, confidential_must: bool) -> bool:
    """Whether a client must use PKCE: public clients always; confidential ones when
    the setting `oauth_pkce_required_for_confidential_clients` (`confidential_must`) is on."""
    return public or confidential_must


def challenge_problem(challenge: str | None, method: str | None, *, must: bool) -> str | None:
    """Why an authorization request's challenge cannot be accepted, in words naming the
    parameter; None when it can (also: no challenge from a client that need not send one)."""
    if method and method not in METHODS:
        return "code_challenge_method must be S256 (plain is not accepted)"
    if not challenge:
        if method:
            return "code_challenge_method was sent without code_challenge"
        if must:
            return "code_challenge is required (PKCE with S256)"
        return None
    if not _CHALLENGE.match(challenge):
        return "code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~"
    return None


def verifier_problem(
    verifier: str | None, challenge: str | None, method: str | None, *, must: bool
) -> str | None:
    """Why the token request's code_verifier does not prove the code's challenge
    (RFC 7636 §4.6), or None when it does or the code was issued without one to a client
    that need not use PKCE."""
    if challenge is not None:
        if method not in METHODS:
            return f"the code was issued for PKCE method {method}, which is no longer accepted"
        if not verifier:
            return "code_verifier is missing: the code was issued with a PKCE code_challenge"
        if not same(s256(verifier), challenge):
            return "code_verifier does not match the code_challenge"
        return None
    if verifier:
        # RFC 9700 §2.1.1: a verifier for a code without a challenge is refused (a PKCE
        # downgrade attack sends one to make the server believe PKCE was used).
        return "code_verifier given, but the code was issued without PKCE"
    if must:
        return "the code was issued without PKCE, which this client must use"
    return None
