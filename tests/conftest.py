import os

from hypothesis import settings

pytest_plugins = ["simnet.testing"]

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
