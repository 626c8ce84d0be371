"""The URL and email parts Metabase extracts with regular expressions: `host`, `domain`, `subdomain`, `path`.

Metabase defines each part by one Java regex built on lookbehind and lookahead (metabase.lib.filter.desugar.jvm).
RE2 (DuckDB) has no lookaround, and MariaDB's PCRE refuses the variable-length lookbehind of `path`, so each part
is written here twice with the same matches:

- `GROUPED`: no lookaround; the part is the first capture group (PostgreSQL, DuckDB). A consumed prefix stands
  for the lookbehind (the leftmost match starts at the same place), an anchored suffix for the lookahead, and
  "a segment that is not `www`" is spelled out as alternatives instead of `(?!www\\.)`.
- `WHOLE`: Metabase's own patterns, the part being the whole match (MySQL/MariaDB `REGEXP_SUBSTR`, which has no
  groups); `path` has no such form and is cut from its match instead (`PATH_MATCH`, part from its first slash).

Semantics, Metabase's quirks included: `host` is the main domain and its TLD (`www.bbc.co.uk` -> `bbc.co.uk`,
an email's part after `@` without subdomains), `domain` the segment before the TLD (a short second-level label
such as `co` counts as part of the TLD), `subdomain` the first segment that is neither `www` nor the main
domain, `path` everything from the first `/` after the host to a `?` or `#`. No match is NULL.
"""
from __future__ import annotations

import re

PARTS = ("host", "domain", "subdomain", "path")


def _segment(excluded: str) -> str:
    return f"[^{excluded}]+"


def _not_www(excluded: str) -> str:
    """One whole segment that is not exactly `www`."""
    c = f"[^{excluded}]"
    w = f"[^w{excluded}]"
    return f"(?:{c}{{1,2}}|{c}{{4,}}|{w}{c}{c}|w{w}{c}|ww{w})"


_PREFIX = r"(?:^|@|//|\.)"
_TAIL = r"(?:[:/?#].*)?$"
_HOST = r"@.:/?#"  # characters a host or domain segment cannot hold
_SUB = r".:/?#"    # Metabase's subdomain segments may hold '@'

GROUPED = {
    "host": (_PREFIX + "(" + _not_www(_HOST) + r"\.(?:[^@.:/?#]{1,3}\.)?" + _segment(_HOST) + ")" + _TAIL),
    "domain": (_PREFIX + "(" + _not_www(_HOST) + ")"
               + r"(?:\.[^@.:/?#]{1,3}\.[^@.:/?#]+|\.[^@.:/?#]+)" + _TAIL),
    # The segment is a subdomain when what follows it is more than the main domain and its TLD: three or
    # more segments, or two whose first is too long (over three characters) to be part of a TLD.
    "subdomain": (_PREFIX + "(" + _not_www(_SUB) + r")\."
                  + r"(?:[^.:/?#]+\.[^.:/?#]+\.[^.:/?#]+(?:\.[^.:/?#]+)*|[^.:/?#]{4,}\.[^.:/?#]+)" + _TAIL),
    "path": r"\.[^/]{1,10}(/[^#?]*)",
}

WHOLE = {
    "host": r"(?<=@|//|\.|^)(?!www\.)[^@.:/?#]+\.(?:[^@.:/?#]{1,3}\.)?[^@.:/?#]+(?=[:/?#].*$|$)",
    "domain": (r"(?<=@|//|\.|^)(?!www\.)[^@.:/?#]+"
               r"(?=\.[^@.:/?#]{1,3}\.[^@.:/?#]+(?:[:/?#].*)?$|\.[^@.:/?#]+(?:[:/?#].*)?$)"),
    "subdomain": (r"(?<=@|//|\.|^)(?!www\.)(?![^.:/?#]+\.(?:[^.:/?#]{1,3}\.)?[^.:/?#]+(?:[:/?#].*)?$)"
                  r"[^.:/?#]+(?=\.)"),
}
PATH_MATCH = r"\.[^/]{1,10}/[^#?]*"
_COMPILED: dict = {}


def extract(text, part):
    """The part of `text` in Python (SQLite's url_part function): GROUPED's first group, None without one."""
    if not isinstance(text, str) or part not in GROUPED:
        return None
    if part not in _COMPILED:
        _COMPILED[part] = re.compile(GROUPED[part])
    match = _COMPILED[part].search(text)
    return match.group(1) if match and match.group(1) else None
