"""The package's version, in a module of its own so that code inside aflite can read it without
importing the package's face (which gathers every layer)."""

VERSION = "0.1.0"


def versions() -> dict[str, str]:
    """The versions of aflite and of what shapes its numbers, as a run's ``summary.json`` and
    data set card record them (the libraries are imported: call it after a run)."""
    import platform

    import numpy as np
    import sklearn
    import torch

    return {
        "aflite": VERSION,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "scikit-learn": sklearn.__version__,
    }
