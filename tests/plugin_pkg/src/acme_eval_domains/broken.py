"""A plugin module that cannot be imported (a missing dependency)."""

import acme_dependency_that_is_not_installed  # noqa: F401

DOMAIN = None
