"""YAML text for git: keys sorted, block lists, multi-line text (SQL, markdown) as `|` blocks, no line
folding, Unicode kept; the same document always gives the same bytes."""
from __future__ import annotations

import yaml


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):  # a value shared by two keys is written twice, never as &anchor
        return True


def _text(dumper, value: str):
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _text)


def dump(document) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=True, allow_unicode=True, default_flow_style=False,
                     width=100000, indent=2)


def load(text: str):
    return yaml.safe_load(text)
