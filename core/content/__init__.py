"""Content: the domain services that two or more feature plugins share.

Owns what every plugin needs about cards, collections, revisions, bookmarks, timelines, segments and
legacy metrics, related entities and the JSON of the data model, and the content kinds plugins
contribute (kinds), with what listing them needs (items: collection items; search: search hits).
A service used by one plugin only belongs in that plugin. Must not know HTTP requests (services take
a session and a user).
"""
