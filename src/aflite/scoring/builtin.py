"""Imports every built-in scorer, so the registry holds them in this order."""

# ruff: noqa: I001  -- the import order is the registration order (what --help lists)

from aflite.scoring import predictability as _predictability  # noqa: F401
from aflite.scoring import datamap as _datamap  # noqa: F401
from aflite.scoring import pvi as _pvi  # noqa: F401
from aflite.scoring import aum as _aum  # noqa: F401
from aflite.scoring import el2n as _el2n  # noqa: F401
from aflite.scoring import forgetting as _forgetting  # noqa: F401
from aflite.scoring import partial as _partial  # noqa: F401
