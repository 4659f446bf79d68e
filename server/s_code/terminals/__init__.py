"""Background terminals the agent drives: full-authority processes approved one start at a time,
their output redacted into a head-and-tail buffer and streamed, their whole tree ended on kill and
with the session."""
