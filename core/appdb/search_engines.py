"""What the search index holds and how each app-DB engine searches it: the index table's name, the kinds
the core indexes (with the declaration of their triggers to the change counters, made in every process
that imports the app DB), and each engine's index SQL (AppBackend.search_index). Apart from
core.appdb.search_index, which keeps the index, so that core.appdb.db can name an engine's index
without importing what imports it."""
from __future__ import annotations

import abc

from . import changes

TABLE = "search_index"
# The engine's own objects beside the table, which no model describes (FTS5's tables, the GIN index).
ENGINE_OBJECTS = (f"{TABLE}_fts", f"ix_{TABLE}_text_trgm")
# The kinds the core indexes: index model -> (content table, text columns).
CORE_KINDS = {
    "card": ("report_card", ("name", "description")),
    "collection": ("collection", ("name", "description")),
    "database": ("metabase_database", ("name", "description")),
    "table": ("metabase_table", ("name", "display_name", "description")),
    "segment": ("segment", ("name", "description")),
}


def indexed(table: str) -> None:
    """Declare, in this process, that writes of `table` write the index too (through its triggers)."""
    changes.triggered(table, TABLE)


for _table, _columns in CORE_KINDS.values():
    indexed(_table)


def _text_sql(columns, row: str = "NEW") -> str:
    return " || char(10) || ".join(f"lower(coalesce({row}.{c}, ''))" for c in columns)


class PlainIndex(abc.ABC):
    """What an engine's index provides: the match on the index table (LIKE, unless a subclass has a
    better one) and, from each engine's subclass, the triggers that keep the table."""

    def setup_sql(self) -> list[str]:
        """Statements run once after the table exists (text indexes); a failing one is logged and skipped."""
        return []

    @abc.abstractmethod
    def trigger_sql(self, model: str, table: str, columns) -> list[str]:
        """The statements creating the triggers that keep `model`'s index rows in step with `table`."""

    def drop_trigger_sql(self, model: str, table: str) -> list[str]:
        return []

    def match_sql(self, long_tokens: int, short_tokens: int) -> str:
        """The condition on search_index for tokens :l0.. (three characters or more) and :s0.. (fewer),
        each bound as a LIKE pattern (%token%, escaped with a backslash), any one matching."""
        names = [f"l{i}" for i in range(long_tokens)] + [f"s{i}" for i in range(short_tokens)]
        return " OR ".join(f"{TABLE}.text LIKE :{n} ESCAPE '\\'" for n in names)

    def match_params(self, long_tokens: list[str], short_tokens: list[str]) -> dict:
        params = {f"l{i}": _like(t) for i, t in enumerate(long_tokens)}
        params.update({f"s{i}": _like(t) for i, t in enumerate(short_tokens)})
        return params


class SQLiteIndex(PlainIndex):
    """FTS5 with the trigram tokenizer (case-sensitive: the text is lowered already, as LIKE sees it),
    an external-content table over search_index kept by triggers on it."""

    def setup_sql(self) -> list[str]:
        return [
            f"CREATE VIRTUAL TABLE {TABLE}_fts USING fts5(text, content='{TABLE}', content_rowid='id', "
            "tokenize='trigram case_sensitive 1')",
            f"CREATE TRIGGER {TABLE}_fts_insert AFTER INSERT ON {TABLE} BEGIN "
            f"INSERT INTO {TABLE}_fts (rowid, text) VALUES (NEW.id, NEW.text); END",
            f"CREATE TRIGGER {TABLE}_fts_delete AFTER DELETE ON {TABLE} BEGIN "
            f"INSERT INTO {TABLE}_fts ({TABLE}_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text); END",
            f"CREATE TRIGGER {TABLE}_fts_update AFTER UPDATE OF text ON {TABLE} BEGIN "
            f"INSERT INTO {TABLE}_fts ({TABLE}_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text); "
            f"INSERT INTO {TABLE}_fts (rowid, text) VALUES (NEW.id, NEW.text); END",
        ]

    def trigger_sql(self, model: str, table: str, columns) -> list[str]:
        upsert = (f"INSERT INTO {TABLE} (model, model_id, text) VALUES ('{model}', NEW.id, {_text_sql(columns)}) "
                  f"ON CONFLICT (model, model_id) DO UPDATE SET text = excluded.text;")
        return [
            f"CREATE TRIGGER {TABLE}_{model}_insert AFTER INSERT ON {table} BEGIN {upsert} END",
            f"CREATE TRIGGER {TABLE}_{model}_update AFTER UPDATE OF {', '.join(columns)} ON {table} "
            f"BEGIN {upsert} END",
            f"CREATE TRIGGER {TABLE}_{model}_delete AFTER DELETE ON {table} BEGIN "
            f"DELETE FROM {TABLE} WHERE model = '{model}' AND model_id = OLD.id; END",
        ]

    def drop_trigger_sql(self, model: str, table: str) -> list[str]:
        return [f"DROP TRIGGER IF EXISTS {TABLE}_{model}_{op}" for op in ("insert", "update", "delete")]

    def match_sql(self, long_tokens: int, short_tokens: int) -> str:
        parts = [f"{TABLE}.id IN (SELECT rowid FROM {TABLE}_fts WHERE {TABLE}_fts MATCH :match)"] if long_tokens else []
        parts += [f"{TABLE}.text LIKE :s{i} ESCAPE '\\'" for i in range(short_tokens)]
        return " OR ".join(parts)

    def match_params(self, long_tokens: list[str], short_tokens: list[str]) -> dict:
        params = {f"s{i}": _like(t) for i, t in enumerate(short_tokens)}
        if long_tokens:
            # Each token an FTS5 string (a substring for the trigram tokenizer), any one matching.
            params["match"] = " OR ".join('"' + t.replace('"', '""') + '"' for t in long_tokens)
        return params


class PostgresIndex(PlainIndex):
    """pg_trgm's GIN index on the text serves LIKE '%token%'; one trigger function for every kind."""

    def setup_sql(self) -> list[str]:
        return ["CREATE EXTENSION IF NOT EXISTS pg_trgm",
                f"CREATE INDEX ix_{TABLE}_text_trgm ON {TABLE} USING gin (text gin_trgm_ops)"]

    FUNCTION = f"""CREATE OR REPLACE FUNCTION tessera_{TABLE}() RETURNS trigger AS $$
DECLARE
  body text := '';
  i int;
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM {TABLE} WHERE model = TG_ARGV[0] AND model_id = OLD.id;
    RETURN OLD;
  END IF;
  FOR i IN 1 .. TG_NARGS - 1 LOOP
    IF i > 1 THEN body := body || E'\\n'; END IF;
    body := body || lower(coalesce(to_jsonb(NEW) ->> TG_ARGV[i], ''));
  END LOOP;
  INSERT INTO {TABLE} (model, model_id, text) VALUES (TG_ARGV[0], NEW.id, body)
    ON CONFLICT (model, model_id) DO UPDATE SET text = EXCLUDED.text;
  RETURN NEW;
END $$ LANGUAGE plpgsql"""

    def trigger_sql(self, model: str, table: str, columns) -> list[str]:
        arguments = ", ".join(f"'{a}'" for a in (model, *columns))
        return [self.FUNCTION,
                f"CREATE TRIGGER {TABLE}_{model} AFTER INSERT OR UPDATE OF {', '.join(columns)} OR DELETE "
                f"ON {table} FOR EACH ROW EXECUTE FUNCTION tessera_{TABLE}({arguments})"]

    def drop_trigger_sql(self, model: str, table: str) -> list[str]:
        return [f"DROP TRIGGER IF EXISTS {TABLE}_{model} ON {table}"]


def _like(token: str) -> str:
    escaped = token.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


