"""Policy: the one place that answers who may do what.

Owns the permission model (collections, data access, downloads, the data model, details), the
data-access questions the metadata plugins ask, the sharing guards and who asks (principal: a user
or a shared object's anonymous grant, one protocol). Every read and write path asks
here; nothing else reads permission rows. Must not know HTTP or any engine.
"""
