"""Vehicle data: the latest-value store's read side, the pull endpoint and the history."""
