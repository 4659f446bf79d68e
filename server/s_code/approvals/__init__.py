"""Permission modes, the one policy, frozen approval cards and the prompt transport."""
