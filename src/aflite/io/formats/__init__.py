"""The built-in data formats, one module each, listed in :mod:`aflite.plugins` (whose order
is the registration order, which ``aflite.io.FORMATS`` and the help follow). Detection tries
formats in reverse order, so a format registered later (a plugin's) takes precedence over a
built-in one.
"""
