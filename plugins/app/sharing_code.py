"""Signed embedding as the share page shows it: the embedding form's state (each parameter enabled,
locked or disabled, and a locked parameter's preview value), the server-side code a site runs to sign
its embed's token (Python, Node and Ruby, as Metabase shows them), and the preview's token.

The code names the secret by a placeholder, never the key: it is shown to be copied into another
site's server, and the page is not where a secret is handed out. The preview's token is signed here
with the key the API gives administrators (GET /api/setting/embedding-secret-key), in the shape
/api/preview-embed reads: `resource`, `params` (the locked values), `_embedding_params` (the form's
rules) and a ten-minute `exp`, as Metabase's frontend signs its preview.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

from joserfc import jwt
from joserfc.jwk import OctKey

RULES = (("disabled", "Disabled"), ("enabled", "Editable"), ("locked", "Locked"))
SECRET_PLACEHOLDER = "YOUR_EMBEDDING_SECRET_KEY"
PREVIEW_SECONDS = 600
# The embed's look in its URL's hash, Metabase's defaults for a new embed.
HASH = "#bordered=true&titled=true"


@dataclass(frozen=True)
class Param:
    """One of the object's parameters in the embedding form."""

    slug: str
    name: str
    type: str
    rule: str
    value: str

    @property
    def token_value(self):
        """The locked value as the token carries it: a number for a number or id filter when it reads as
        one, else the text; a value typed with commas is a list, as a filter of several values takes."""
        parts = [part.strip() for part in self.value.split(",") if part.strip()]
        if not self.type.startswith("date/"):
            parts = [_number(part) if self.type.startswith(("number/", "id")) else part for part in parts]
            return parts if len(parts) != 1 else parts[0]
        return self.value.strip()


def _number(text: str):
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() and "." not in text else number


def params_of(obj: dict, args) -> list[Param]:
    """The object's parameters with the rule and preview value of the form (`rule.<slug>`, `value.<slug>`
    in `args`), else the saved `embedding_params` (a parameter it does not name is disabled)."""
    saved = obj.get("embedding_params") if isinstance(obj.get("embedding_params"), dict) else {}
    found = []
    for parameter in obj.get("parameters") or []:
        if not isinstance(parameter, dict) or not parameter.get("slug"):
            continue
        slug = str(parameter["slug"])
        rule = str(args.get(f"rule.{slug}") or saved.get(slug) or "disabled")
        found.append(Param(slug, str(parameter.get("name") or slug), str(parameter.get("type") or ""),
                           rule if rule in dict(RULES) else "disabled", str(args.get(f"value.{slug}") or "")))
    return found


def embedding_params(params: list[Param]) -> dict[str, str]:
    return {p.slug: p.rule for p in params}


def locked_values(params: list[Param]) -> dict:
    """The token's `params`: every locked parameter, null when no preview value was given (an embed's
    server must set each locked parameter, null meaning "no filter")."""
    return {p.slug: (p.token_value if p.value.strip() else None) for p in params if p.rule == "locked"}


def resource_key(kind: str) -> str:
    return "dashboard" if kind == "dashboard" else "question"


def preview_token(secret: str, kind: str, object_id: int, params: list[Param]) -> str:
    claims = {"resource": {resource_key(kind): object_id}, "params": locked_values(params),
              "_embedding_params": embedding_params(params), "exp": int(time.time()) + PREVIEW_SECONDS}
    return jwt.encode({"alg": "HS256", "typ": "JWT"}, claims, OctKey.import_key(secret))


def _indented(value: dict, indent: str) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return text.replace("\n", "\n" + indent)


def code(language: str, site_url: str, kind: str, object_id: int, params: list[Param]) -> str:
    """The code a site's server runs to sign the embed's token and build its iframe's URL."""
    key, values = resource_key(kind), locked_values(params)
    site, path = json.dumps(site_url), f"/embed/{key}/"
    if language == "python":
        return (
            "# You will need to install via 'pip install pyjwt' or in a similar manner\n"
            "import jwt\nimport time\n\n"
            f"METABASE_SITE_URL = {site}\n"
            f"METABASE_SECRET_KEY = \"{SECRET_PLACEHOLDER}\"\n\n"
            "payload = {\n"
            f"  \"resource\": {{\"{key}\": {object_id}}},\n"
            f"  \"params\": {_indented(values, '  ').replace('null', 'None')},\n"
            "  \"exp\": round(time.time()) + (60 * 10)  # 10 minute expiration\n"
            "}\n"
            "token = jwt.encode(payload, METABASE_SECRET_KEY, algorithm=\"HS256\")\n\n"
            f"iframeUrl = METABASE_SITE_URL + \"{path}\" + token + \"{HASH}\"\n")
    if language == "node":
        return (
            "// You will need to install via 'npm install jsonwebtoken' or in your package.json\n\n"
            "const jwt = require(\"jsonwebtoken\");\n\n"
            f"const METABASE_SITE_URL = {site};\n"
            f"const METABASE_SECRET_KEY = \"{SECRET_PLACEHOLDER}\";\n\n"
            "const payload = {\n"
            f"  resource: {{ {key}: {object_id} }},\n"
            f"  params: {_indented(values, '  ')},\n"
            "  exp: Math.round(Date.now() / 1000) + (10 * 60) // 10 minute expiration\n"
            "};\n"
            "const token = jwt.sign(payload, METABASE_SECRET_KEY);\n\n"
            f"const iframeUrl = METABASE_SITE_URL + \"{path}\" + token + \"{HASH}\";\n")
    if language == "ruby":
        entries = ",\n".join(f"    {json.dumps(k)} => {_ruby(v)}" for k, v in values.items())
        ruby_params = "{\n" + entries + "\n  }" if entries else "{}"
        return (
            "# You will need to install 'jwt' gem first via 'gem install jwt' or in your project Gemfile\n\n"
            "require 'jwt'\n\n"
            f"METABASE_SITE_URL = {site}\n"
            f"METABASE_SECRET_KEY = \"{SECRET_PLACEHOLDER}\"\n\n"
            "payload = {\n"
            f"  :resource => {{:{key} => {object_id}}},\n"
            f"  :params => {ruby_params},\n"
            "  :exp => Time.now.to_i + (60 * 10) # 10 minute expiration\n"
            "}\n"
            "token = JWT.encode payload, METABASE_SECRET_KEY\n\n"
            f"iframe_url = METABASE_SITE_URL + \"{path}\" + token + \"{HASH}\"\n")
    raise ValueError(language)


def _ruby(value) -> str:
    if value is None:
        return "nil"
    if isinstance(value, list):
        return "[" + ", ".join(_ruby(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


LANGUAGES = (("python", "Python"), ("node", "Node.js"), ("ruby", "Ruby"))
