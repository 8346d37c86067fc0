pytest_plugins = ["simnet.testing"]
