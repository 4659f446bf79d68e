"""The edit engine: three formats and a legacy form → one plan per file → validate → write."""
