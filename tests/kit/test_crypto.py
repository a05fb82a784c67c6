"""The crypto kit (autoport.kit.crypto): sealing and signing, and the stored formats.

The values below were made by the code the kit replaced (the webhook sealer, the refresh
token grant's successor sealer and the consent flow's step signer, before they shared
the kit), with the master key b"k" * 32: what is stored or in flight when the new code
starts must still open.
"""

from __future__ import annotations

import pytest

from autoport.kit import crypto
from autoport.oauth.grants.refresh_token import _seal, _unseal
from autoport.oauth.tokens import TokenSettings
from autoport.proof.service import sign as sign_step
from autoport.proof.service import unsign
from autoport.webhooks.sealing import SealError, derive_key, seal, unseal

MASTER = b"k" * 32
OLD_WEBHOOK_SECRET = "v1:cKLjh0ctV-4vfcvl85D7A5fzkfrn7bnaWgozgc1z4D5oMvVpNT8S0tIBeYg="
OLD_SUCCESSOR = "CsDCJeXo_qvo9HJbqpZJAA9o4ubW6hQbVnuwVZNwokjr1LpPByY3cQ8yDkp-hoBf6co5iFs="
OLD_STEP = (
    "eyJleHAiOjQ2MTE2ODYwMTg0MjczODc5MDQsIm4iOiJ4In0.5d4Zcdb3dKLFw9sIMMz2gWEZwtoWK00AwLn9Vr-Azwk"
)
TOKENS = TokenSettings(token_key=MASTER, access_seconds=1, refresh_seconds=1, grace_us=1)


def test_a_webhook_secret_sealed_by_the_old_code_still_opens() -> None:
    key = derive_key(MASTER)
    assert unseal(key, OLD_WEBHOOK_SECRET, application_id="app-1") == "whsec_old-secret"
    with pytest.raises(SealError):
        unseal(key, OLD_WEBHOOK_SECRET, application_id="app-2")  # another row's context


def test_a_refresh_successor_sealed_by_the_old_code_still_opens() -> None:
    assert _unseal(TOKENS, "ap_rt_old", OLD_SUCCESSOR) == ("ap_at_new", "ap_rt_new")
    # Only the holder of the old refresh token derives the key.
    assert _unseal(TOKENS, "ap_rt_other", OLD_SUCCESSOR) is None


def test_a_consent_step_signed_by_the_old_code_still_verifies() -> None:
    payload = unsign(MASTER, "oem-state", OLD_STEP, now_us=0)
    assert payload == {"exp": 2**62, "n": "x"}
    assert unsign(MASTER, "oem-result", OLD_STEP, now_us=0) is None  # another step


def test_new_values_round_trip_in_the_same_formats() -> None:
    key = derive_key(MASTER)
    sealed = seal(key, "whsec_new", application_id="app-1")
    assert sealed.startswith("v1:")
    assert unseal(key, sealed, application_id="app-1") == "whsec_new"
    assert _unseal(TOKENS, "ap_rt_x", _seal(TOKENS, "ap_rt_x", ("a", "b"))) == ("a", "b")
    step = sign_step(MASTER, "oem-state", {"exp": 5})
    assert unsign(MASTER, "oem-state", step, now_us=5) == {"exp": 5}
    assert unsign(MASTER, "oem-state", step, now_us=6) is None  # expired


@pytest.mark.parametrize(
    "sealed", ["", "not base64!", "AAAA", OLD_SUCCESSOR[:-4] + "AAAA", OLD_SUCCESSOR + "A"]
)
def test_unseal_refuses_what_is_not_a_value_sealed_here(sealed: str) -> None:
    assert crypto.unseal(b"x" * 32, sealed) is None


@pytest.mark.parametrize("signed", ["", ".", "abc", "abc.", ".abc", "e30.AAAA", "e30.!!"])
def test_verify_refuses_what_was_not_signed_here(signed: str) -> None:
    assert crypto.verify(MASTER, "oem-state", signed) is None


def test_a_signature_is_bound_to_its_key_and_purpose() -> None:
    signed = crypto.sign(MASTER, "a", b"data")
    assert crypto.verify(MASTER, "a", signed) == b"data"
    assert crypto.verify(MASTER, "b", signed) is None
    assert crypto.verify(b"j" * 32, "a", signed) is None
