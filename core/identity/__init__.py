"""Identity: users, their groups and passwords.

Owns creating users and keeping superuser status, memberships and personal collections in step,
reset tokens, and password hashing and complexity rules. Must not know HTTP or any engine.
"""
