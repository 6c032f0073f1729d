"""The reliability suite: property tests, fault injection, the authorization audit, crash
trials and a small load run. Counts scale up in the slow profile (``--slow`` or
``AGENT_HOST_SLOW=1``; see ``tests.profile``)."""
