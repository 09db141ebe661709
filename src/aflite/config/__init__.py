"""Every option of every command, declared once: frozen configs whose fields carry their
default, their check and their help. The command line's options, the presets, ``--config``
files and the API's defaults are all read from them.

>>> from aflite.config import FilterConfig
>>> FilterConfig(input="data.jsonl", threshold=75)
Traceback (most recent call last):
...
aflite.config.ConfigError: threshold: must be in [0, 1], got 75
"""

from aflite._internal.options import Config, ConfigError, config_fields, flag, option
from aflite.config.audit import AuditConfig
from aflite.config.compare import CompareConfig
from aflite.config.files import read_config_file
from aflite.config.filter import FilterConfig
from aflite.config.presets import PRESET_OPTIONS, PRESETS, preset
from aflite.config.score import ScoreConfig, scorer_options

__all__ = [
    "AuditConfig",
    "CompareConfig",
    "Config",
    "ConfigError",
    "FilterConfig",
    "PRESETS",
    "ScoreConfig",
    "PRESET_OPTIONS",
    "config_fields",
    "flag",
    "option",
    "preset",
    "read_config_file",
    "scorer_options",
]
