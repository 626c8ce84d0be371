"""The embedding toggles, each gating exactly what Metabase's gates:

- `enable-embedding-static`: signed embedding. /api/embed and /api/preview-embed, the embeddable lists
  (GET /api/card|dashboard/embeddable) and changing a card's or dashboard's `enable_embedding` /
  `embedding_params`; 400 "Embedding is not enabled." while off (core.policy.sharing.check_embedding).
- `enable-embedding-interactive`, `enable-embedding-sdk`, `enable-embedding-simple`: Metabase's
  interactive embedding (framing the whole application), the SDK's CORS origins and JWT sign-in, and
  Embedded Analytics JS; Tessera serves none of these, so they gate nothing here.
- `enable-embedding` (deprecated since Metabase 0.51): gates nothing by itself. Its environment variable
  still works as Metabase's MB_ENABLE_EMBEDDING: at startup TESSERA_ENABLE_EMBEDDING sets the static,
  interactive and SDK toggles to its value, and setting it together with one of their own variables
  stops startup.

Turning any of them on makes an embedding secret key when none is set (plugins.sharing.service).
"""
from __future__ import annotations

from core import SettingDef

from . import service

DEPRECATED = "enable-embedding"
TOGGLES = {
    DEPRECATED: "Deprecated: set enable-embedding-static instead (on its own it enables nothing).",
    "enable-embedding-static": "Allow embedding questions and dashboards with signed tokens (static embedding).",
    "enable-embedding-interactive": "Allow interactive embedding of the whole application (not served by Tessera).",
    "enable-embedding-sdk": "Allow embedding through the embedding SDK (not served by Tessera).",
    "enable-embedding-simple": "Allow embedding through Embedded Analytics JS (not served by Tessera).",
}
# What the deprecated environment variable sets at startup (Metabase's list: not the simple toggle).
SYNCED = ("enable-embedding-static", "enable-embedding-interactive", "enable-embedding-sdk")


class EmbeddingSettingsConflict(RuntimeError):
    """The deprecated and a current embedding toggle are both set in the environment."""


def settings() -> list[SettingDef]:
    return [SettingDef(key, type="boolean", default=False, visibility="authenticated",
                       on_change=service.ensure_embedding_secret, description=description)
            for key, description in TOGGLES.items()]


def sync_from_environment(session, registry) -> bool:
    """Startup: the deprecated toggle's environment variable sets the toggles it was split into, unless
    one of theirs is set too (then startup stops, naming both). True when it changed one; the caller
    commits."""
    definitions = {key: registry.definition(key) for key in (DEPRECATED, *SYNCED)}
    value = registry.env_value(definitions[DEPRECATED])
    if value is None:
        return False
    current = [d.env_name for key, d in definitions.items() if key != DEPRECATED and registry.env_value(d) is not None]
    if current:
        raise EmbeddingSettingsConflict(
            f"Both {definitions[DEPRECATED].env_name} (deprecated) and {', '.join(current)} are set: "
            f"remove {definitions[DEPRECATED].env_name}.")
    changed = [key for key in SYNCED if registry.get(session, key) != value]
    for key in changed:
        registry.set(session, key, value)
    return bool(changed)
