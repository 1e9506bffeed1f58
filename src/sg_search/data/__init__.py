"""Small data files shipped with the package (loaded with importlib.resources)."""
