"""Sync: learning a database's schema and values.

Owns schema sync, fingerprints and semantic types, stored field values, sync schedules, display-name
humanisation and the generated Sample Database. Must not know HTTP or any engine by name.
"""
