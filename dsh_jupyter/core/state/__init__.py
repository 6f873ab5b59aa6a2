"""The shared SQLite state: sessions, observations and the write gate, spills, the call log, where the file lives."""
