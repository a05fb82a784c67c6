"""The one CSRF protection of the pages: a form's token is derived from the cookie it
protects (a keyed hash with the session secret), so there is nothing to store, and a
token is worth nothing to anyone who cannot read that cookie, or with another cookie.

The key is the live session key ring (`AppState.session_key`, autoport.kit.keyring): a
rotation (`autoport keys rotate --which session_secret`) reaches every running process
on its next form, tokens of the previous key are taken for as long as its window lasts
(a form rendered just before the rotation still works), and not one moment longer (after
a leak the old key mints nothing). Each surface has its own purpose string, so a token
of one surface's form is never taken by another's.
"""

from __future__ import annotations

from dataclasses import dataclass

from autoport.kit.crypto import same, token_hash
from autoport.kit.keyring import accepted

FIELD = "csrf_token"


@dataclass(frozen=True, slots=True)
class Csrf:
    purpose: str  # "consent", "owner", "console"

    def token(self, key: bytes, anchor: str) -> str:
        """The token for forms of the browser whose cookie holds `anchor`, under the
        current session key (`key`)."""
        return token_hash(key, f"{self.purpose}-csrf:{anchor}")

    def valid(self, key: bytes, anchor: str, sent: str | None) -> bool:
        """Whether `sent` is the token of `anchor` under the current key or a previous
        one still in its window."""
        if not anchor or not sent:
            return False
        return any(same(self.token(used, anchor), sent) for used in accepted(key))
