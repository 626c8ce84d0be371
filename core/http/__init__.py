"""HTTP: how a request becomes a call and an answer.

Owns endpoint declaration and parsing (core.http.api), the request types with Metabase's error texts,
the error hierarchy and its bodies, authentication (sessions, the auth gates), paging and login
throttling. Must not know what any endpoint does, nor any engine.
"""
