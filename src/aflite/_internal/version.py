"""The package's version, in a module of its own so that code inside aflite can read it without
importing the package's face (which gathers every layer)."""

VERSION = "0.1.0"
