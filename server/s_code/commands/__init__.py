"""run_command: projecting a command (resolved argv, sandbox profile, card) and running it."""
