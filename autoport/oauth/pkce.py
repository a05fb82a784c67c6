"""Proof Key for Code Exchange (RFC 7636): the one place its rules are checked, when the
consent flow accepts a challenge (autoport.consent.service), when a code is issued for it
(autoport.oauth.service) and when the code is exchanged
(autoport.oauth.grants.authorization_code)."""

from __future__ import annotations

import base64
import hashlib
import re

from autoport.kit.crypto import same

# RFC 7636 §4.2: S256 and plain; a client that can do S256 must use it, so it is the
# default when a challenge comes without a method (§4.3).
METHODS = ("S256", "plain")
DEFAULT_METHOD = "S256"
# RFC 7636 §4.1 (code_verifier = 43*128unreserved); the challenge of either method has
# the same alphabet and length (§4.2: BASE64URL of SHA-256 is 43 characters).
_CHALLENGE = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")


def s256(verifier: str) -> str:
    """RFC 7636 §4.2: BASE64URL-ENCODE(SHA256(ASCII(code_verifier))), unpadded."""
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def challenge_problem(challenge: str | None, method: str | None, *, public: bool) -> str | None:
    """Why an authorization request's challenge cannot be accepted, in words naming the
    parameter; None when it can (also: no challenge from a confidential client)."""
    if method and method not in METHODS:
        return "code_challenge_method must be S256 or plain"
    if not challenge:
        if method:
            return "code_challenge_method was sent without code_challenge"
        if public:
            # RFC 9700 §2.1.1: public clients must use PKCE.
            return "public clients must send code_challenge (PKCE)"
        return None
    if not _CHALLENGE.match(challenge):
        return "code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~"
    return None


def verifier_problem(
    verifier: str | None, challenge: str | None, method: str | None, *, public: bool
) -> str | None:
    """Why the token request's code_verifier does not prove the code's challenge
    (RFC 7636 §4.6), or None when it does or the code was issued without one."""
    if challenge is not None:
        if not verifier:
            return "code_verifier is missing: the code was issued with a PKCE code_challenge"
        computed = s256(verifier) if method == "S256" else verifier
        if not same(computed, challenge):
            return "code_verifier does not match the code_challenge"
        return None
    if verifier:
        # RFC 9700 §2.1.1: a verifier for a code without a challenge is refused (a PKCE
        # downgrade attack sends one to make the server believe PKCE was used).
        return "code_verifier given, but the code was issued without PKCE"
    if public:
        return "a public client must use PKCE"
    return None
