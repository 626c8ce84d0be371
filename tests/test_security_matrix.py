"""The map from the threat table (compat/security.md section 6, rows 1-26) to the tests that prove it.

A test proves a row by carrying `@pytest.mark.security_row(N)` (several rows: `security_row(N, M)`);
the tests stay next to the feature they exercise. This module checks the map is complete: every row
whose feature exists has at least one marked test. A row whose feature is not built yet is listed in
NOT_BUILT with the routes that would implement it, so the check fails as soon as such a route is
registered without a marked test for the row. Rows whose tests are being written on another branch
are listed in PENDING_ON_BRANCH until they are merged and marked.

GUARD_REMOVED records, per row, the guard that was disabled by hand (edited, tests run, edit
reverted) to see the marked tests fail: a marked test that still passes without its guard proves
nothing and must be strengthened.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS = range(1, 27)
# Where marked tests live: the test trees and the shared driver conformance suite.
SOURCES = (ROOT / "tests", ROOT / "contrib", ROOT / "core" / "testing")

# row -> (feature that would implement it, route prefixes whose presence means the feature exists)
NOT_BUILT: dict[int, tuple] = {}
PENDING_ON_BRANCH: dict[int, str] = {}

# row -> the guard(s) disabled, one at a time, to see that row's marked tests fail.
GUARD_REMOVED = {
    1: "setup-token consumption (the concurrency test fails); with the has_users checks too (replay succeeds)",
    2: "Details extra='forbid' -> 'ignore'; a detail-dependent key added to the PostgreSQL connect args (fuzz)",
    3: "allowed-directory check and regular-file check in core.driver.sources.check_file_path",
    4: "each SQLite lockdown layer alone (attach limit, authorizer, function denylist, query_only, trusted_schema)"
       " and the whole lockdown",
    5: "enable_external_access in DuckDB's LOCKED_CONFIG together with its read-back",
    6: "PostgreSQL role_problems check at connect; READ ONLY session and transaction",
    7: "local_infile=False in the MySQL connect args",
    8: "SQLite mode=ro with query_only; PostgreSQL READ ONLY session and transaction",
    9: "samefile check against the app DB and its -wal/-shm/-journal files",
    10: "core.outbound.addresses.refusal made a no-op (a marked test does it too); the check of redirect hops"
        " skipped; the connection made to the host name instead of the checked address (a second lookup);"
        " the refusal of the unconfigured webhook (http) channel in plugins.subscriptions.service.checked_channels;"
        " HTTP actions' allow-list replaced by 0.0.0.0/0,::/0 (their refused destinations and redirect then fail)",
    11: "percent-encoding of URL values; JSON-escaping of header values; the fixed-host check of a saved template",
    14: "the restricted subquery in core.query.refs.Context.table_expression (the plain table); the row "
        "policy's key in the result-cache key (plugins.query_cache.service.cache_key); the refusal of native "
        "SQL in core.query.preparation.prepare; covers() in the field-values paths",
    15: "check_query in plugins.cards.service.update_card; the card read check and the mapped-table query check"
        " of a dashboard PUT (plugins.dashboards.dashcards, plugins.dashboards.mappings)",
    16: "known-default/length check in core.driver.crypto.fernet_for; embedding secret shortened to 64 bits",
    17: "username throttler check; IP throttler check",
    18: "dummy-hash verification, skipped in core.http.auth.login and, separately, inside Hasher.verify",
    19: "session max age; token hashing at rest; end_all_sessions; HttpOnly and Secure cookie flags",
    20: "rehash on login; passwords truncated to 72 characters in hash and in verify",
    21: "reset-token TTL; single use (token not cleared); deactivated-user refusal",
    22: "hash comparison for a key with a matching prefix; key stored unhashed",
    13: "check_public_sharing in plugins.sharing.public.find; the dashcard-on-this-dashboard check"
        " (plugins.dashboards.queries.card_on); the grant's field check (core.content.public._granted with"
        " core.query.access.field); declared targets in core.content.public.matched_parameters (the request's"
        " target used); the grant check in core.query.access.check_query",
    23: "mask_details; merge_masked",
    25: "check_not_cross_site in the core.http.api wrapper (form and text/plain posts then change state)",
    26: "a route's declared auth ignored (anonymous calls then reach user routes)",
    12: "in plugins.sharing: the alg check with HS512 allowed too; signature verification (payload read unverified);"
        " the exp/nbf/iat check; the locked-parameter rule; enable_embedding; the unset-secret check (each alone)",
    24: "SQLite progress-handler deadline, PostgreSQL statement_timeout, MariaDB max_statement_time, each x5-x10",
}


def _marked_rows() -> dict[int, list[str]]:
    """Row -> ["file::function", ...] for every security_row mark in the sources, read from the AST."""
    found: dict[int, list[str]] = {}
    files = [p for source in SOURCES for p in ([source] if source.is_file() else sorted(source.rglob("*.py")))]
    for path in files:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for decorator in node.decorator_list:
                if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                        and decorator.func.attr == "security_row"):
                    for arg in decorator.args:
                        assert isinstance(arg, ast.Constant) and isinstance(arg.value, int), \
                            f"{path}:{node.lineno}: security_row takes row numbers"
                        found.setdefault(arg.value, []).append(f"{path.relative_to(ROOT)}::{node.name}")
    return found


def _api_rules(app) -> list[str]:
    return [rule.rule for rule in app.url_map.iter_rules()]


def test_marks_name_existing_rows():
    unknown = {row: tests for row, tests in _marked_rows().items() if row not in ROWS}
    assert unknown == {}


def _missing_rows(rules: list[str], marked: dict[int, list[str]]) -> list[str]:
    missing = []
    for row in ROWS:
        if row in marked or row in PENDING_ON_BRANCH:
            continue
        if row in NOT_BUILT:
            feature, prefixes = NOT_BUILT[row]
            built = [rule for rule in rules if rule.startswith(prefixes)]
            if not built:
                continue
            missing.append(f"row {row}: {feature} now exists ({built[0]}) but no test is marked security_row({row})")
        else:
            missing.append(f"row {row}: no test is marked security_row({row})")
    return missing


def test_every_built_row_has_a_marked_test(app):
    assert _missing_rows(_api_rules(app), _marked_rows()) == []


def test_a_route_of_a_not_built_feature_makes_its_row_due(app, monkeypatch):
    """The check itself has teeth: once a route of a not-built feature exists, its row needs tests.
    (With every row built, an unused row number stands for a feature still to come.)"""
    if not NOT_BUILT:
        monkeypatch.setitem(globals(), "NOT_BUILT", {27: ("a future feature", ("/api/future",))})
        monkeypatch.setitem(globals(), "ROWS", range(1, 28))
    due = []
    for row, (_, prefixes) in sorted(NOT_BUILT.items()):
        if row in _marked_rows():
            continue
        app.add_url_rule(prefixes[0] + "/probe/<x>", f"probe_{row}", lambda x: "")
        due.append(f"row {row}")
    missing = _missing_rows(_api_rules(app), _marked_rows())
    assert [line.split(":")[0] for line in missing] == due and due


def test_rows_listed_as_not_built_are_really_not_built(app):
    """A feature that lands must move its row out of NOT_BUILT (marking its tests), not stay excused."""
    rules = _api_rules(app)
    marked = _marked_rows()
    stale = {row: feature for row, (feature, prefixes) in NOT_BUILT.items()
             if row in marked or any(rule.startswith(prefixes) for rule in rules)}
    assert stale == {}


def test_every_guarded_row_records_its_guard_removal():
    marked = _marked_rows()
    assert sorted(row for row in marked if row not in GUARD_REMOVED) == []
