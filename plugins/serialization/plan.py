"""What an import would do: an export's files read and keyed (model and entity_id, or the name path of
a database, table or field), and compared with what this server would export now, as created, changed
and unchanged files with a readable diff of the content; problems name the file."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from . import export as ex
from . import kinds as k
from . import yamltext


class ImportProblem(Exception):
    """A file that cannot be imported; the message starts with its path."""


@dataclass
class Incoming:
    path: str
    key: tuple
    data: dict
    text: str


@dataclass
class Report:
    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict:
        return {"status": "ok" if self.ok else "error", "created": self.created, "changed": self.changed,
                "unchanged": len(self.unchanged), "errors": self.problems}

    def lines(self) -> list[str]:
        out = [f"created {p}" for p in self.created] + [f"changed {p}" for p in self.changed]
        out.append(f"{len(self.created)} created, {len(self.changed)} changed, {len(self.unchanged)} unchanged")
        return out + [f"error: {p}" for p in self.problems]


# -------------------------------------------------------------------------------------------- reading

def _key(path: str, data: dict) -> tuple:
    if path == "settings.yaml":
        return ("Setting", "settings")
    meta = data.get("serdes/meta")
    if not isinstance(meta, list) or not meta or not all(isinstance(m, dict) for m in meta):
        raise ImportProblem(f"{path}: no serdes/meta list")
    model = meta[-1].get("model")
    if model == "FieldValues":
        return ("FieldValues", _meta_path(meta[:-1]))
    if model in ("Database", "Table", "Field"):
        return (model, _meta_path(meta) if model != "Database" else (meta[0].get("id"),))
    if model not in k.TOP_KINDS:
        raise ImportProblem(f"{path}: unknown model {model!r} in serdes/meta")
    if not k.TOP_KINDS[model].present:
        raise ImportProblem(f"{path}: {model} is not available here (the plugin that keeps it is disabled)")
    if not isinstance(data.get("entity_id"), str):
        raise ImportProblem(f"{path}: no entity_id")
    return (model, data["entity_id"])


def _meta_path(meta: list[dict]) -> tuple:
    db = meta[0].get("id")
    schema = next((m.get("id") for m in meta if m.get("model") == "Schema"), None)
    table = next((m.get("id") for m in meta if m.get("model") == "Table"), None)
    fields = [m.get("id") for m in meta if m.get("model") == "Field"]
    return (db, schema, table, *fields) if fields else (db, schema, table)


def read(files: dict[str, str]) -> tuple[list[Incoming], list[str]]:
    """Parse an export's files (relative path -> text); problems name the file."""
    incoming, problems = [], []
    for path in sorted(files):
        if not path.endswith(".yaml"):
            continue
        try:
            data = yamltext.load(files[path])
            if not isinstance(data, dict):
                raise ImportProblem(f"{path}: not a YAML mapping")
            incoming.append(Incoming(path, _key(path, data), data, files[path]))
        except ImportProblem as exc:
            problems.append(str(exc))
        except Exception as exc:  # a YAML syntax error: its message says where
            problems.append(f"{path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    return incoming, problems


def read_dir(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*.yaml")) if ".git" not in p.relative_to(root).parts}


# -------------------------------------------------------------------------------------------- comparing

def compare(session, incoming: list[Incoming], registry) -> tuple[Report, dict]:
    """Each file's status against what this server would export now; and the current documents by key."""
    options = ex.Options(include_field_values=any(i.key[0] == "FieldValues" for i in incoming),
                         include_database_secrets=any(i.key[0] == "Database" and "details" in i.data
                                                      for i in incoming))
    current = {d.key: d for d in ex.documents(session, options, registry)}
    report = Report()
    seen: dict[tuple, str] = {}
    for item in incoming:
        if item.key in seen:
            report.problems.append(f"{item.path}: the same entity as {seen[item.key]}")
            continue
        seen[item.key] = item.path
        now = current.get(item.key)
        if now is None:
            report.created.append(item.path)
            report.diffs.append(_diff("", item.text, item.path))
        elif item.key[0] == "Setting":
            mine = {key: now.data.get(key) for key in item.data}
            (report.unchanged if mine == item.data else report.changed).append(item.path)
            if mine != item.data:
                report.diffs.append(_diff(yamltext.dump(mine), yamltext.dump(item.data), item.path))
        elif now.data == item.data:
            report.unchanged.append(item.path)
        else:
            report.changed.append(item.path)
            report.diffs.append(_diff(ex.text_of(now), yamltext.dump(item.data), item.path, now.path))
    return report, current


def _diff(old: str, new: str, path: str, old_path: str | None = None) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        fromfile=f"server/{old_path or path}" if old else "/dev/null",
                                        tofile=f"files/{path}"))
