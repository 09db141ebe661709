"""The built-in data formats, one module each; importing this package registers them.

The import order is the registration order, which ``aflite.io.FORMATS`` and the help follow.
Detection tries formats in reverse order, so a format registered later (a plugin's) takes
precedence over a built-in one.
"""

# isort: off
from aflite.io.formats import jsonl, delimited, parquet, hf, image_folder, image_npz

# isort: on

__all__ = ["delimited", "hf", "image_folder", "image_npz", "jsonl", "parquet"]
