"""Text rules every layer shares: how names and paths are quoted so they cannot forge structure."""
