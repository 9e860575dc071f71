"""The OS sandbox every command the agent runs goes through, and the boundary the file tools
obey in-process. :mod:`.policy` says what is writable, hidden and reachable; the runners
(bubblewrap, Landlock, none) enforce it for a command."""
