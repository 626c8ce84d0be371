"""core.policy.principal: a shared object's grant is a principal as a user is. Every public function of
core.policy.permissions (private ones too) that takes a `user` (read from the module, so a new one is covered) accepts a grant
and answers it as it answers nobody, whatever user shares the grant's number; keys never confuse the two."""
from __future__ import annotations

import inspect

from core.appdb.models import User
from core.policy import permissions
from core.policy.principal import Principal, SharedGrant, account_of, key_of
from core.testing import add_collection, add_database


def _arguments(function, session, db_id: int, table_id: int, collection_id: int) -> dict:
    values = {"session": session, "database_id": db_id, "table_id": table_id, "table_ids": [table_id],
              "collection_id": collection_id, "perm_type": "view-data", "native": False, "namespace": None,
              "group_id": None, "whole_db": False, "action": "read",
              "obj": {"model": "collection", "id": collection_id}, "default": False, "levels": ("read", "write"),
              # _tables_where's table-by-table question and its test of the rows (every table allowed).
              "one": permissions.can_read_table, "allowed": lambda value: True}
    names = [p for p in inspect.signature(function).parameters if p != "user"]
    missing = [n for n in names if n not in values]
    assert not missing, f"{function.__name__}: no value for {missing}: add one to this test"
    return {n: values[n] for n in names}


def user_functions():
    return [f for name, f in vars(permissions).items()
            if inspect.isfunction(f) and f.__module__ == permissions.__name__
            and "user" in inspect.signature(f).parameters]


def test_every_permission_function_answers_a_grant_as_nobody(app, admin, user):
    db_id, (table_id,) = add_database(app)
    collection_id = add_collection(app, "Shared")
    state = app.extensions["tessera"]
    functions = user_functions()
    assert {"is_admin", "group_ids", "data_permission", "can_query", "is_sandboxed"} <= {f.__name__ for f in functions}
    with app.app_context(), state.db.session() as session:
        # The grant carries the administrator's and the user's numbers: neither lends it a right.
        for number in (admin.user["id"], user.user["id"]):
            grant = SharedGrant("dashboard", number, frozenset({1}), frozenset({1}))
            for function in functions:
                args = _arguments(function, session, db_id, table_id, collection_id)
                assert function(user=grant, **args) == function(user=None, **args), function.__name__


def test_a_grant_and_a_user_of_the_same_number_are_different_principals(app, admin):
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        account = session.get(User, admin.user["id"])
        grant = SharedGrant("card", account.id, frozenset({2, 1}), frozenset({3}))
        assert isinstance(account, Principal) and isinstance(grant, Principal)
        assert account_of(account) is account and account_of(grant) is None and account_of(None) is None
        assert key_of(account) == ("user", account.id)
        assert key_of(grant) == ("grant", "card", account.id, (1, 2), (3,)) != key_of(account)
        assert key_of(SharedGrant("dashboard", account.id)) != key_of(SharedGrant("card", account.id))
        assert key_of(None) is None


def test_an_embedded_tenant_is_part_of_the_grant_and_its_key():
    from core.policy.principal import current_tenant, embedding_tenant

    assert current_tenant() is None
    with embedding_tenant({"state": "TX", "org": 3}):
        tx = SharedGrant("card", 1, frozenset({1}), tenant=current_tenant())
    with embedding_tenant(None):
        bare = SharedGrant("card", 1, frozenset({1}), tenant=current_tenant())
    public = SharedGrant("card", 1, frozenset({1}))
    assert current_tenant() is None
    assert tx.attributes == {"org": 3, "state": "TX"} and bare.attributes == {} and public.attributes is None
    assert len({key_of(tx), key_of(bare), key_of(public)}) == 3
    assert key_of(tx) == key_of(SharedGrant("card", 1, frozenset({1}), tenant=(("org", 3), ("state", "TX"))))
