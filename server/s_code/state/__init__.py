"""The embedded SQLite store: one file in the platform state directory."""
