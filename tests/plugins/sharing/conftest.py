from tests.plugins.cards.fixtures import warehouse  # noqa: F401  (the small SQLite warehouse fixture)
