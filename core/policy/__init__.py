"""Policy: the one place that answers who may do what.

Owns the permission model (collections, data access, downloads, the data model, details), the
data-access questions the metadata plugins ask and the sharing guards. Every read and write path asks
here; nothing else reads permission rows. Must not know HTTP or any engine.
"""
