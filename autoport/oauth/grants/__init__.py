"""The token endpoint's grants, one module per grant type: `authorization_code` (RFC 6749
§4.1 with PKCE, RFC 7636), `refresh_token` (RFC 6749 §6, rotated, RFC 9700 §4.14),
`client_credentials` (RFC 6749 §4.4). Each exposes `grant(db, ...)`, which returns the
token response (autoport.oauth.tokens.token_response) or raises OAuthError."""
