"""Embedding token verification (plugins.sharing.tokens): every forged or broken token is a 400."""
import hashlib
import time

import pytest

from core.http.errors import Invalid
from plugins.sharing import tokens

from .jwt_helpers import SECRET, b64, card_token, encode, sign, tamper

NOW = time.time()


def refused(token, secret=SECRET, **kw) -> str:
    with pytest.raises(Invalid) as info:
        tokens.unsign(token, secret, **kw)
    assert info.value.status == 400
    return info.value.body


def test_a_signed_token_gives_its_claims():
    claims = tokens.unsign(card_token(7, {"state": "CA"}), SECRET)
    assert claims["resource"] == {"question": 7}
    assert claims["params"] == {"state": "CA"}


def test_the_key_is_the_secret_text_not_its_hex_bytes():
    token = encode({"alg": "HS256"}, {"params": {}}, bytes.fromhex(SECRET))
    assert "corrupt or manipulated" in refused(token)


@pytest.mark.security_row(12)
@pytest.mark.parametrize("header,expected", [
    ({"alg": "none"}, "JWT `alg` cannot be `none`."),
    ({"alg": "None"}, "JWT `alg` cannot be `none`."),
    ({"typ": "JWT"}, "JWT is missing `alg`."),
    ({"alg": "HS512"}, "must be HS256"),
    ({"alg": "HS384"}, "must be HS256"),
    ({"alg": "RS256"}, "must be HS256"),
    ({"alg": 256}, "must be a string"),
])
def test_algorithms_other_than_hs256_are_refused(header, expected):
    # Signed with the right secret under HS256 or HS512: the header alone decides the refusal.
    for key, digest in ((SECRET, hashlib.sha256), (SECRET, hashlib.sha512), (None, None)):
        token = encode(header, {"resource": {"question": 1}, "params": {}}, key, digest or hashlib.sha256)
        assert expected in refused(token)


@pytest.mark.security_row(12)
def test_wrong_key_and_changed_payload_are_refused():
    assert "corrupt or manipulated" in refused(card_token(1, key="f" * 64))
    assert "corrupt or manipulated" in refused(tamper(card_token(1), resource={"question": 2}))
    assert "corrupt or manipulated" in refused(tamper(card_token(1, {"state": "CA"}), params={"state": "NY"}))
    header, payload, _ = card_token(1).split(".")
    assert "corrupt or manipulated" in refused(f"{header}.{payload}.")


@pytest.mark.security_row(12)
def test_times_are_checked_with_sixty_seconds_of_leeway():
    base = {"resource": {"question": 1}, "params": {}}
    assert tokens.unsign(sign({**base, "exp": int(NOW) - 30}), SECRET, now=NOW)
    assert refused(sign({**base, "exp": int(NOW) - 90}), now=NOW) == "Token is expired."
    assert tokens.unsign(sign({**base, "iat": int(NOW) + 30}), SECRET, now=NOW)
    assert "issued in the future" in refused(sign({**base, "iat": int(NOW) + 120}), now=NOW)
    assert "not yet valid" in refused(sign({**base, "nbf": int(NOW) + 120}), now=NOW)
    assert "must be a number" in refused(sign({**base, "exp": "tomorrow"}), now=NOW)


def test_missing_exp_is_accepted_unless_required():
    token = sign({"resource": {"question": 1}, "params": {}})
    assert tokens.unsign(token, SECRET)["params"] == {}
    assert "`exp`" in refused(token, require_exp=True)


def test_other_registered_claims_are_not_judged():
    token = sign({"resource": {"question": 1}, "params": {}, "iss": 5, "aud": ["x"]})
    assert tokens.unsign(token, SECRET)["iss"] == 5


# Each malformed token and the reason it is refused for.
MALFORMED = {
    "": "The embedding token is empty.",
    "abc": "not a signed JSON Web Token",
    "a.b": "not a signed JSON Web Token",
    "a.b.c.d": "not a signed JSON Web Token",
    "!!!.e30.x": "header is not base64url-encoded JSON",
    b64(b"[1]") + ".e30.x": "header must be a JSON object",
    # The signature is checked before the payload is read.
    b64(b'{"alg":"HS256"}') + ".bm90IGpzb24." + "x" * 43: "corrupt or manipulated",
}


@pytest.mark.parametrize("token", list(MALFORMED))
def test_malformed_tokens_are_a_400(token):
    with pytest.raises(Invalid) as refusal:
        tokens.unsign(token, SECRET)
    assert refusal.value.status == 400 and MALFORMED[token] in refusal.value.body


def test_a_payload_that_is_not_an_object_is_a_400():
    signing_input = b64(b'{"alg":"HS256"}') + "." + b64(b"[1, 2]")
    import hmac

    token = signing_input + "." + b64(hmac.new(SECRET.encode(), signing_input.encode(), hashlib.sha256).digest())
    with pytest.raises(Invalid) as refusal:
        tokens.unsign(token, SECRET)
    assert (refusal.value.status, refusal.value.body) == (400, "The embedding token was refused: invalid_payload.")


@pytest.mark.security_row(12)
def test_an_unset_secret_is_a_400():
    assert refused(card_token(1), secret=None) == "The embedding secret key has not been set."
    assert refused(card_token(1), secret="") == "The embedding secret key has not been set."


def test_params_are_required_and_a_map():
    claims = tokens.unsign(sign({"resource": {"question": 1}}), SECRET)
    with pytest.raises(Invalid, match=r"Token is missing value for keypath \[:params\]"):
        tokens.token_params(claims)
    with pytest.raises(Invalid, match=r"must be a map"):
        tokens.token_params({"params": [1]})
    assert tokens.token_params({"params": {}}) == {}
    with pytest.raises(Invalid, match=r"Token is missing value for keypath \[:resource :dashboard\]"):
        tokens.get_in(claims, "resource", "dashboard")
    assert tokens.get_in(claims, "resource", "question") == 1


def test_unknown_critical_headers_are_refused_and_key_headers_ignored():
    payload = {"resource": {"question": 1}, "params": {}}
    assert "refused" in refused(encode({"alg": "HS256", "crit": ["exp"]}, payload))
    assert "refused" in refused(encode({"alg": "HS256", "b64": False, "crit": ["b64"]}, payload))
    # a key named in the header is never used: the token still needs the server's secret
    forged = encode({"alg": "HS256", "jwk": {"kty": "oct", "k": b64(b"attacker")}}, payload, "attacker")
    assert "corrupt or manipulated" in refused(forged)
    assert tokens.unsign(encode({"alg": "HS256", "kid": "../x"}, payload), SECRET) == payload
