"""The command sandbox: tiers from a self-test, a C exec helper, bubblewrap, Landlock, seccomp."""
