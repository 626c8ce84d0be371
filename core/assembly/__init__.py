"""Assembly: how a Tessera app is put together and started.

Owns create_app, configuration, the plugin manager (BUILTIN_PLUGINS, ESSENTIAL_PLUGINS), every hook
specification, the small records hooks return, the settings registry, events, the log ring buffer, the
`tessera` CLI and the gunicorn runner. Must not know any feature area or engine by name beyond the
built-in plugin list.
"""

__version__ = "0.1.0"
