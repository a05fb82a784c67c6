"""The OAuth 2.0 authorization server: client authentication, the grants, tokens,
revocation, vehicleinfo, metadata, and the bearer-token authenticator every data route
relies on (RFC 6749, 6750, 7009, 7523, 7636, 8414, 9700)."""
