from ._main import script

script()
