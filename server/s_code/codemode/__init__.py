"""Code mode: a JavaScript program (QuickJS, in a throwaway worker process) that calls read-only
tools synchronously through the one dispatch and returns only what matters.

``limits`` holds the limits, ``workers`` starts and kills worker processes (one warm spare per
session), ``runner`` runs one program: it answers the worker's child calls through a :class:`Host`
that the tool layer provides, notifies each child call before and after, and owns the deadline.
``worker`` is the worker process itself (standard library and QuickJS only).
"""
