"""An agent's persistent memory: one directory of Markdown files with ``MEMORY.md`` as index.

``host.memory.store`` confines every path to the directory and reads the index's head;
``host.memory.tools`` gives an agent the ``memory_read``/``memory_write``/``memory_list``
tools and the prompt section teaching it how to keep its memory. Which directory a profile's
children share is decided by ``host.profiles.memory``. See docs/profiles.md.
"""
