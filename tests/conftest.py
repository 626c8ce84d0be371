pytest_plugins = ["core.testing"]
