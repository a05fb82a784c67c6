"""Which paths are OAuth endpoints: their every error is in the RFC 6749 §5.2 shape, also
the errors answered before routing (autoport.kit.middleware) or by the router (405).
The app hands `is_oauth_path` to the kit's error handlers, request pipeline and OpenAPI
builder (autoport.app), which know no feature's paths themselves."""

from __future__ import annotations

# The OAuth endpoints of autoport.oauth.routes, whose every error is in the RFC 6749
# shape: also those answered before routing (413, by the request pipeline) or by the
# router (405). Paths as routed, i.e. after the pipeline stripped the sandbox prefix.
OAUTH_PATHS = frozenset({"/v1/access_tokens", "/v1/access_token", "/v1/revoke", "/v1/vehicleinfo"})
_ACCOUNT_TOKEN_PREFIX, _ACCOUNT_TOKEN_SUFFIX = "/v1/", "/oauth/access_tokens"  # /v1/{id}/...


def is_oauth_path(path: str) -> bool:
    """Whether errors on `path` (the routed path, without /sandbox) are RFC 6749 ones."""
    if path in OAUTH_PATHS:
        return True
    if not path.endswith(_ACCOUNT_TOKEN_SUFFIX) or not path.startswith(_ACCOUNT_TOKEN_PREFIX):
        return False
    account_id = path[len(_ACCOUNT_TOKEN_PREFIX) : -len(_ACCOUNT_TOKEN_SUFFIX)]
    return account_id != "" and "/" not in account_id
