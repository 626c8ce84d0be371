"""The npm package oidc-provider (a certified OpenID provider) run for a test module with the machine's
Node.js (oidc_provider.mjs beside this file, installed by `make test-setup` into node_modules here).

The fixture makes the provider's signing key, so a test can also sign ID tokens the provider's published
keys verify (for the refusals no honest provider produces: another audience, expired, `alg: none`).
`sign_in` walks the provider's own login and consent forms with a requests session, as a browser would.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

import requests
from joserfc import jwt
from joserfc.jwk import RSAKey

from tests.serving import free_port, stop_process

HERE = Path(__file__).parent
NODE = shutil.which("node")
MODULE = HERE / "node_modules" / "oidc-provider"
CLIENT_ID = "tessera"
CLIENT_SECRET = "tessera-client-secret-for-the-tests"
OTHER_CLIENT_ID = "another-app"
KID = "test-signing-key"


@dataclass
class OidcProvider:
    port: int
    accounts_file: Path
    key: RSAKey
    process: subprocess.Popen

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set_accounts(self, accounts: dict) -> None:
        """login -> claims; read by the provider at every sign-in."""
        self.accounts_file.write_text(json.dumps(accounts))

    def sign(self, claims: dict, header: dict | None = None) -> str:
        """An ID token signed with the provider's own key."""
        return jwt.encode({"alg": "RS256", "kid": KID, **(header or {})}, claims, self.key)

    def stop(self) -> None:
        stop_process(self.process)


def start(folder: Path, redirect_uris: list[str], accounts: dict, thin_id_tokens: bool = False) -> OidcProvider:
    if not MODULE.exists():
        raise RuntimeError(f"{MODULE} is missing: run `make test-setup` (npm install in {HERE})")
    key = RSAKey.generate_key(2048, parameters={"kid": KID, "use": "sig", "alg": "RS256"})
    port = free_port()
    accounts_file = folder / "accounts.json"
    accounts_file.write_text(json.dumps(accounts))
    client = {"grant_types": ["authorization_code"], "response_types": ["code"], "redirect_uris": redirect_uris}
    config = {"port": port, "accounts": str(accounts_file), "thin_id_tokens": thin_id_tokens, "jwks": {"keys": [key.as_dict(private=True)]},
              "clients": [{**client, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET},
                          {**client, "client_id": OTHER_CLIENT_ID, "client_secret": "another-secret"}]}
    config_file = folder / "provider.json"
    config_file.write_text(json.dumps(config))
    log = open(folder / "provider.log", "w")
    process = subprocess.Popen([NODE, str(HERE / "oidc_provider.mjs"), str(config_file)], stdout=log,
                               stderr=subprocess.STDOUT, cwd=HERE)
    provider = OidcProvider(port, accounts_file, key, process)
    deadline = time.monotonic() + 30
    while True:
        try:
            if requests.get(f"{provider.issuer}/.well-known/openid-configuration", timeout=2).ok:
                return provider
        except requests.RequestException:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            provider.stop()
            raise RuntimeError("oidc-provider did not start: " + (folder / "provider.log").read_text()[-2000:])
        time.sleep(0.2)


def sign_in(authorize_url: str, login: str) -> str:
    """Follow the provider's pages from its authorization URL: log in as `login` (any password) and
    consent; returns the URL the provider sends the browser back to (Tessera's callback)."""
    browser = requests.Session()
    url = authorize_url
    answer = browser.get(url, allow_redirects=False, timeout=10)
    for _ in range(10):
        while answer.status_code in (302, 303):
            url = urljoin(url, answer.headers["location"])
            if "/auth/sso/" in url:
                return url
            answer = browser.get(url, allow_redirects=False, timeout=10)
        page = answer.text
        if 'name="prompt" value="login"' in page:
            form = {"prompt": "login", "login": login, "password": "any"}
        elif 'name="prompt" value="consent"' in page:
            form = {"prompt": "consent"}
        else:
            raise AssertionError(f"unexpected provider page at {url}: {answer.status_code} {page[:500]}")
        action = page.split('action="', 1)[1].split('"', 1)[0]
        answer = browser.post(urljoin(url, action), data=form, allow_redirects=False, timeout=10)
    raise AssertionError("the provider never sent the browser back")
