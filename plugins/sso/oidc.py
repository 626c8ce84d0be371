"""OpenID Connect sign-in with authlib's Flask OAuth client: the authorization code flow with PKCE
(S256), state and nonce, for any number of providers (oidc_settings.py).

`begin` makes the provider's authorization URL and the `Flow` to remember; `complete` exchanges the code
(with the PKCE verifier) at the token endpoint, verifies the ID token (id_tokens.py: the provider's
keys, issuer, audience, expiry, nonce) and completes its claims with the userinfo endpoint's (the ID
token's win), then requires `email_verified` when either sent it; `identity` reads the person from the verified
claims and refuses an e-mail domain the provider does not allow. Every request to the provider goes
through core.outbound.http (authlib's requests session is given an adapter that sends through it).

The flow is remembered in the browser, not on the server: a cookie scoped to /auth/sso/NAME, encrypted
and authenticated with the instance's key (core.driver.crypto's Fernet) and valid for ten minutes. The
callback's `state` must equal the cookie's, so a sign-in cannot be finished in a browser that did not
start it (login CSRF), and the nonce and PKCE verifier never leave the browser that started it.
"""
from __future__ import annotations

import hmac
import json
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

import requests
from authlib.integrations.base_client import OAuthError
from authlib.integrations.flask_client import FlaskIntegration, FlaskOAuth2App
from cryptography.fernet import InvalidToken
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict

from core.driver.crypto import current_fernet
from core.outbound import http as outbound
from core.outbound.targets import RESERVED_HEADERS

from . import id_tokens
from .accounts import Identity, Policy, SignInRefused
from .oidc_settings import Provider

SOURCE = "oidc"
FLOW_COOKIE = "tessera.oidc"
FLOW_SECONDS = 600
DISCOVERY_TTL_SECONDS = 3600
# Claims that describe the token, not the person: never copied into login_attributes.
TOKEN_CLAIMS = frozenset({"iss", "sub", "aud", "exp", "nbf", "iat", "jti", "nonce", "azp", "at_hash", "c_hash",
                          "auth_time", "acr", "amr", "sid", "email_verified", "s_hash"})


class _GuardedAdapter(BaseAdapter):
    """requests' transport replaced by core.outbound.http.fetch: the SSRF guard decides every request."""

    def __init__(self, allowed_cidrs: str):
        super().__init__()
        self.allowed_cidrs = allowed_cidrs

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        headers = {k: v for k, v in request.headers.items() if k.lower() not in RESERVED_HEADERS}
        try:
            answer = outbound.fetch(request.method, request.url, headers=headers, body=request.body,
                                    allowed_cidrs=self.allowed_cidrs, timeouts=id_tokens.TIMEOUTS,
                                    max_bytes=id_tokens.MAX_DOCUMENT_BYTES, max_redirects=0)
        except outbound.OutboundError as exc:
            raise id_tokens.ProviderUnavailable(f"The identity provider could not be reached: {exc.message}") from None
        response = requests.Response()
        response.status_code = answer.status
        response.headers = CaseInsensitiveDict(answer.headers)
        response._content = answer.body
        response.encoding = requests.utils.get_encoding_from_headers(response.headers)
        response.url = answer.url
        response.request = request
        return response

    def close(self):
        pass


class _Client(FlaskOAuth2App):
    """authlib's Flask OAuth 2 client, its HTTP sessions sending through the outbound guard."""

    def __init__(self, provider: Provider, metadata: dict, allowed_cidrs: str):
        super().__init__(FlaskIntegration(provider.name), provider.name, client_id=provider.client_id,
                         client_secret=provider.client_secret,
                         client_kwargs={"scope": " ".join(provider.scopes), "code_challenge_method": "S256",
                                        "token_endpoint_auth_method": "client_secret_basic" if provider.client_secret
                                        else "none"},
                         **metadata)
        self.allowed_cidrs = allowed_cidrs

    def _guarded(self, session):
        adapter = _GuardedAdapter(self.allowed_cidrs)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        return session

    def _get_session(self):
        return self._guarded(super()._get_session())

    def _get_oauth_client(self, **metadata):
        return self._guarded(super()._get_oauth_client(**metadata))


_discovered: dict[str, tuple[float, dict]] = {}
_lock = threading.Lock()


def metadata(provider: Provider, allowed_cidrs: str) -> dict:
    """The provider's discovery document (cached an hour), checked to name its issuer and endpoints."""
    now = time.monotonic()
    with _lock:
        cached = _discovered.get(provider.discovery_url)
    if cached is not None and now - cached[0] < DISCOVERY_TTL_SECONDS:
        return cached[1]
    document = id_tokens.get_json(provider.discovery_url, allowed_cidrs, "discovery document")
    for key in ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri"):
        if not isinstance(document.get(key), str) or not document[key]:
            raise id_tokens.ProviderUnavailable(f"The identity provider's discovery document has no {key}.")
    if provider.issuer is not None and document["issuer"] != provider.issuer:
        raise id_tokens.ProviderUnavailable(f"The discovery document names the issuer {document['issuer']!r}, "
                                            f"not the configured {provider.issuer!r}.")
    document = {**document, "_loaded_at": time.time()}  # authlib then reads it from here, not the network
    with _lock:
        _discovered[provider.discovery_url] = (now, document)
    return document


@dataclass(frozen=True)
class Flow:
    """One sign-in in progress, remembered in the browser's flow cookie."""

    provider: str
    state: str
    nonce: str
    code_verifier: str
    redirect_uri: str
    return_to: str


def begin(provider: Provider, allowed_cidrs: str, redirect_uri: str, return_to: str) -> tuple[str, Flow]:
    """The authorization URL to send the browser to, and the flow to remember."""
    client = _Client(provider, metadata(provider, allowed_cidrs), allowed_cidrs)
    started = client.create_authorization_url(redirect_uri)
    return started["url"], Flow(provider=provider.name, state=started["state"], nonce=started["nonce"],
                                code_verifier=started["code_verifier"], redirect_uri=redirect_uri,
                                return_to=return_to)


def seal(flow: Flow) -> str:
    return current_fernet().encrypt(json.dumps(asdict(flow)).encode()).decode()


def unseal(cookie: str | None, provider: str, state: str | None) -> Flow:
    """The flow this browser started with `provider`, when `state` is its state; raises SignInRefused."""
    if not cookie:
        raise SignInRefused("This sign-in was not started in this browser, or took longer than ten minutes: "
                            "start it again.")
    try:
        flow = Flow(**json.loads(current_fernet().decrypt(cookie.encode(), ttl=FLOW_SECONDS)))
    except (InvalidToken, ValueError, TypeError):
        raise SignInRefused("This sign-in took longer than ten minutes or its cookie was altered: start it "
                            "again.") from None
    if flow.provider != provider or not state or not hmac.compare_digest(flow.state, state):
        raise SignInRefused("The sign-in's state does not match the one this browser started: start the "
                            "sign-in again.")
    return flow


def complete(provider: Provider, allowed_cidrs: str, flow: Flow, code: str | None) -> dict:
    """The verified ID token claims for the authorization `code`; raises SignInRefused."""
    if not code:
        raise SignInRefused("The identity provider sent no authorization code.")
    found = metadata(provider, allowed_cidrs)
    client = _Client(provider, found, allowed_cidrs)
    try:
        token = client.fetch_access_token(redirect_uri=flow.redirect_uri, code=code,
                                          code_verifier=flow.code_verifier)
    except OAuthError as exc:
        detail = f"{exc.error}: {exc.description}" if exc.description else str(exc.error or exc)
        raise SignInRefused(f"The identity provider refused to finish the sign-in ({detail}).") from None
    claims = id_tokens.verify(token.get("id_token"), jwks_uri=found["jwks_uri"], issuer=found["issuer"],
                              audience=provider.client_id, nonce=flow.nonce, allowed_cidrs=allowed_cidrs,
                              verified_email=False)
    if found.get("userinfo_endpoint") and token.get("access_token"):
        claims = {**_userinfo(client, token, claims), **claims}
    id_tokens.check_email_verified(claims)
    return claims


def _userinfo(client: _Client, token: dict, claims: dict) -> dict:
    """The userinfo endpoint's claims, for providers whose ID tokens carry few (Okta's code flow); they
    must be about the ID token's subject, and never override what the signed ID token says."""
    try:
        response = client.userinfo(token=token)
    except (OAuthError, requests.RequestException, ValueError) as exc:
        raise id_tokens.ProviderUnavailable(f"The identity provider's userinfo endpoint failed: {exc}") from None
    info = dict(response)
    if info.get("sub") != claims.get("sub"):
        raise SignInRefused("The identity provider's userinfo is about another person than its ID token.")
    return info


def identity(provider: Provider, claims: dict) -> Identity:
    """The person the verified claims describe, named by the provider's claim settings."""
    email = claims.get(provider.email_claim)
    if not isinstance(email, str) or "@" not in email:
        raise SignInRefused(f"The identity provider sent no e-mail address in the `{provider.email_claim}` claim.")
    domain = email.rsplit("@", 1)[1].strip().lower()
    if provider.allowed_email_domains and domain not in provider.allowed_email_domains:
        raise SignInRefused(f"Accounts of the e-mail domain {domain} may not sign in with {provider.display_name}.")
    groups = claims.get(provider.groups_claim)
    if groups is not None:
        groups = [groups] if isinstance(groups, str) else groups
        if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
            raise SignInRefused(f"The `{provider.groups_claim}` claim must be a list of group names.")
    used = {provider.email_claim, provider.first_name_claim, provider.last_name_claim, provider.groups_claim}
    return Identity(source=SOURCE, email=email, first_name=_text(claims.get(provider.first_name_claim)),
                    last_name=_text(claims.get(provider.last_name_claim)), groups=groups,
                    attributes={k: v for k, v in claims.items() if k not in used and k not in TOKEN_CLAIMS})


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def policy(provider: Provider) -> Policy:
    return Policy(create_accounts=provider.auto_create_accounts, group_sync=provider.group_sync,
                  group_mappings=provider.group_mappings)
